/* A stand-in for the C library's adjtimex(2) (LD_PRELOAD), for the tests of the clock's
 * synchronization state: each call reads "state status maxerror esterror" from the file named
 * by PF_FAKE_ADJTIMEX and answers with it, so a test can move the kernel's word on the clock
 * under a live process without touching the real clock. Only reads (modes 0) are answered. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timex.h>

int adjtimex(struct timex *t) {
    const char *path = getenv("PF_FAKE_ADJTIMEX");
    if (!path || t->modes != 0) {
        errno = EPERM;
        return -1;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        errno = EIO;
        return -1;
    }
    int state = 0, status = 0;
    long maxerror = 0, esterror = 0;
    int n = fscanf(f, "%d %d %ld %ld", &state, &status, &maxerror, &esterror);
    fclose(f);
    if (n != 4) {
        errno = EIO;
        return -1;
    }
    t->status = status;
    t->maxerror = maxerror;
    t->esterror = esterror;
    return state;
}

int ntp_adjtime(struct timex *t) { return adjtimex(t); }
