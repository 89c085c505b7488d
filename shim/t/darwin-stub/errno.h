/* Stand-in for the macOS SDK header (cross-check only; see README). */
#ifndef LMC_STUB_ERRNO_H
#define LMC_STUB_ERRNO_H
extern int *__error(void);
#define errno (*__error())
#define EINTR 4
#endif
