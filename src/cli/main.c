#include <stdio.h>
#include <string.h>

#include "splatc.h"

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("splatc %s\n", "0.1.0");
    return 0;
}
