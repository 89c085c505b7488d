/* Stand-in for the macOS SDK header (cross-check only; see README). */
#ifndef LMC_STUB_STDIO_H
#define LMC_STUB_STDIO_H
#include <stddef.h>
typedef struct __sFILE FILE;
extern FILE *__stdoutp;
extern FILE *__stderrp;
#define stdout __stdoutp
#define stderr __stderrp
int fprintf(FILE *, const char *, ...);
int snprintf(char *, size_t, const char *, ...);
int fputs(const char *, FILE *);
int fputc(int, FILE *);
int puts(const char *);
int ferror(FILE *);
int fflush(FILE *);
#endif
