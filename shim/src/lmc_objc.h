#ifndef LMC_OBJC_H
#define LMC_OBJC_H

/*
 * The few places where Apple's Objective-C runtime and the GNU runtime
 * (GCC libobjc, used by the Linux tests) differ, hidden behind macros:
 *
 *   - Apple sends messages with objc_msgSend, declared void(void) and
 *     cast to the exact function type at each call; GNU has no
 *     objc_msgSend but objc_msg_lookup(obj, sel) returning the IMP.
 *   - BOOL is bool on arm64 Apple ("B"), unsigned char in GNU ("C").
 *   - IMP is void(*)(void) on Apple and id(*)(id, SEL, ...) in GNU;
 *     every cast goes through void(*)(void) so -Wcast-function-type
 *     stays quiet on both.
 *
 * NSInteger/NSUInteger do not exist without Foundation; on every LP64
 * target they are long/unsigned long.
 */

#include <objc/runtime.h>
#include <objc/message.h>

typedef long lmc_nsint;
typedef unsigned long lmc_nsuint;

/* A function pointer of type T to call an IMP with its exact type. */
#define LMC_IMP_AS(T, imp) ((T)(void (*)(void))(imp))
/* A C function made into an IMP for class_replaceMethod/addMethod. */
#define LMC_AS_IMP(fn) ((IMP)(void (*)(void))(fn))

#ifdef __APPLE__
/* LMC_MSG(T, obj, sel)(obj, sel, args...) sends sel to obj. */
#define LMC_MSG(T, obj, sel) ((T)(void (*)(void))objc_msgSend)
#define LMC_BOOL_ENC "B"
#else
#define LMC_MSG(T, obj, sel) \
	((T)(void (*)(void))objc_msg_lookup((obj), (sel)))
#define LMC_BOOL_ENC "C"
#endif

/* Whether obj's class (or a superclass) implements sel. */
static inline int
lmc_responds(id obj, SEL sel)
{
	return obj && class_getInstanceMethod(object_getClass(obj), sel);
}

#endif
