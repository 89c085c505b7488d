/* Stand-in for the macOS SDK header (cross-check only; see README). */
#ifndef LMC_STUB_OBJC_RUNTIME_H
#define LMC_STUB_OBJC_RUNTIME_H
#include <stdbool.h>
typedef struct objc_class *Class;
struct objc_object { Class isa; };
typedef struct objc_object *id;
typedef struct objc_selector *SEL;
typedef void (*IMP)(void);
typedef struct objc_method *Method;
typedef bool BOOL;      /* arm64: OBJC_BOOL_IS_BOOL */
#define YES ((BOOL)1)
#define NO ((BOOL)0)
#define nil ((id)0)
#define Nil ((Class)0)
Class objc_getClass(const char *);
SEL sel_registerName(const char *);
Method class_getInstanceMethod(Class, SEL);
IMP class_getMethodImplementation(Class, SEL);
BOOL class_addMethod(Class, SEL, IMP, const char *);
const char *class_getName(Class);
IMP method_getImplementation(Method);
IMP method_setImplementation(Method, IMP);
const char *method_getTypeEncoding(Method);
Class object_getClass(id);
#endif
