/* Stand-in for the macOS SDK header (cross-check only; see README). */
#ifndef LMC_STUB_UNISTD_H
#define LMC_STUB_UNISTD_H
#include <stddef.h>
typedef long ssize_t;
ssize_t write(int, const void *, size_t);
#endif
