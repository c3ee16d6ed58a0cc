#include "harness.h"

/* Runs after every case: nothing to check yet beyond the case's own assertions. */
int splat_test_after_case(void) { return 0; }
