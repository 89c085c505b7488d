/* Stand-in for the macOS SDK header (cross-check only; see README). */
#ifndef LMC_STUB_DLFCN_H
#define LMC_STUB_DLFCN_H
#define RTLD_DEFAULT ((void *)-2)
void *dlsym(void *, const char *);
#endif
