/* splatc: run control, the points where a training run is stopped or saved between two calls of
 * splat_trainer_run (cli.h says what each signal does).
 *
 * The signals are blocked in every thread and taken by one thread with sigwait, so that what
 * they do runs as ordinary code under a mutex: no async-signal-safety to reason about, no handler
 * racing the trainer's free, and a driver's threads never receive them. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static sigset_t signal_set(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    return set;
}

/* One line on stderr with write(2): the main thread may be in the middle of its progress line. */
static void say(const char *text)
{
    size_t n = strlen(text);
    while (n > 0) {
        ssize_t w = write(2, text, n);
        if (w <= 0) return;
        text += w, n -= (size_t)w;
    }
}

static void stop(run_control *rc, int sig)
{
    pthread_mutex_lock(&rc->lock);
    if (!rc->trainer || rc->stop_signal) {
        /* outside the loop, or asked twice: at once. Outputs are written atomically, so a file
         * being written keeps its old content (its temporary is removed by the next writer). */
        say(rc->stop_signal ? "\nsplatc: interrupted again: exiting now\n" : "\nsplatc: interrupted: exiting\n");
        _exit(128 + sig);
    }
    rc->stop_signal = sig;
    splat_trainer_interrupt(rc->trainer);
    say(sig == SIGINT ? "\nsplatc: interrupted: stopping after the current iteration to save (Ctrl-C again quits at "
                        "once)\n"
                      : "\nsplatc: terminated: stopping after the current iteration to save\n");
    pthread_mutex_unlock(&rc->lock);
}

static void save(run_control *rc)
{
    pthread_mutex_lock(&rc->lock);
    if (rc->trainer && !rc->stop_signal) {
        rc->save_now = true;
        splat_trainer_interrupt(rc->trainer);
    }
    pthread_mutex_unlock(&rc->lock);
}

static void *signal_thread(void *arg)
{
    run_control *rc = arg;
    sigset_t set = signal_set();
    for (;;) {
        int sig;
        if (sigwait(&set, &sig) != 0) continue;
        if (sig == SIGUSR1) save(rc);
        else stop(rc, sig);
    }
    return NULL;
}

bool runctl_start(run_control *rc)
{
    memset(rc, 0, sizeof *rc);
    if (pthread_mutex_init(&rc->lock, NULL) != 0) return false;
    sigset_t set = signal_set();
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) return false;
    pthread_t th;
    if (pthread_create(&th, NULL, signal_thread, rc) != 0) {
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        return false;
    }
    pthread_detach(th);
    return true;
}

void runctl_attach(run_control *rc, splat_trainer *t)
{
    pthread_mutex_lock(&rc->lock);
    rc->trainer = t;
    pthread_mutex_unlock(&rc->lock);
}

void runctl_take(run_control *rc, int *stop_signal, bool *save_now)
{
    pthread_mutex_lock(&rc->lock);
    *stop_signal = rc->stop_signal;
    *save_now = rc->save_now;
    rc->save_now = false;
    pthread_mutex_unlock(&rc->lock);
}

bool runctl_stopping(run_control *rc)
{
    pthread_mutex_lock(&rc->lock);
    bool stopping = rc->stop_signal != 0;
    pthread_mutex_unlock(&rc->lock);
    return stopping;
}

void runctl_request_stop(run_control *rc, int signal) { stop(rc, signal); }

void runctl_request_save(run_control *rc) { save(rc); }
