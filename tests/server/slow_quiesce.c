/*
 * slow_quiesce.c - LD_PRELOAD shim for test_server's
 * test_sigterm_while_accepting: every EPOLL_CTL_DEL made on the server's
 * main thread (the thread that drains after SIGTERM, through
 * MHD_quiesce_daemon) waits 50 ms first.
 *
 * Why: with a pool of I/O threads in epoll mode, libmicrohttpd 0.9.75
 * (daemon.c:5527-5531, unchanged in 1.0.1) removes the listen fd from
 * each worker's epoll set after marking the worker quiesced and aborts
 * if that fails, while a worker woken in between removes it first.  The
 * window is a few instructions wide; CI hit it twice in the fresh-root
 * stage.  This shim holds it open, so a server that still races aborts
 * every time rather than once in a few hundred runs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

typedef int (*epoll_ctl_fn)(int, int, int, struct epoll_event *);

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    epoll_ctl_fn real;
    /* (the POSIX way to take a function pointer from dlsym) */
    *(void **)&real = dlsym(RTLD_NEXT, "epoll_ctl");
    if (real == NULL)
        return -1;
    if (op == EPOLL_CTL_DEL && gettid() == getpid()) {
        const struct timespec wait = { 0, 50 * 1000 * 1000 };
        nanosleep(&wait, NULL);
    }
    return real(epfd, op, fd, ev);
}
