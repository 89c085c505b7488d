/* Stand-in for the macOS SDK header (cross-check only; see README). */
#ifndef LMC_STUB_PTHREAD_H
#define LMC_STUB_PTHREAD_H
typedef struct _opaque_pthread_mutex_t {
	long __sig;
	char __opaque[56];
} pthread_mutex_t;
#define PTHREAD_MUTEX_INITIALIZER {0x32AAABA7, {0}}
int pthread_mutex_lock(pthread_mutex_t *);
int pthread_mutex_unlock(pthread_mutex_t *);
#endif
