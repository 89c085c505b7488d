/* Stand-in for the macOS SDK header (cross-check only; see README). */
#ifndef LMC_STUB_OBJC_MESSAGE_H
#define LMC_STUB_OBJC_MESSAGE_H
#include <objc/runtime.h>
void objc_msgSend(void);
#endif
