/* Stand-in for the macOS SDK header (cross-check only; see README). */
#ifndef LMC_STUB_STRING_H
#define LMC_STUB_STRING_H
#include <stddef.h>
int strcmp(const char *, const char *);
size_t strlen(const char *);
#endif
