/*
 * vulkan-capabilities: what a Vulkan device reports to this process, as
 * key=value lines, the way ggml's Vulkan backend asks for it. Run it with
 * the same environment (LD_PRELOAD of the capability shim, its
 * configuration, VK_DRIVER_FILES) as the workload to see what the workload
 * will see; a plan's probe expectations read these keys.
 *
 *   vulkan-capabilities [--device N] [--enable NAME]...
 *
 * The loader is opened with dlopen and its entry points are looked up in
 * the global scope (dlsym(RTLD_DEFAULT)), where a preloaded library comes
 * first: the same resolution as a program linked against libvulkan, such
 * as ggml's backend. Everything else goes through vkGetInstanceProcAddr.
 * Every query is made twice; "consistent" says whether both answers were
 * the same. With --enable (an extension name VK_..., or one of the
 * feature names below), a device is created with those enabled and
 * create_device prints vkCreateDevice's result.
 *
 * Exit: 0, 2 for a bad command line, 3 when there is no loader, no
 * instance or no such device.
 */
#define _GNU_SOURCE
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static PFN_vkGetInstanceProcAddr gipa;
static PFN_vkGetPhysicalDeviceFeatures2 features2;
static VkInstance instance;

/* What one query of a device found. */
struct facts {
	char device[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
	char driver[VK_MAX_DRIVER_NAME_SIZE];
	uint32_t api_version, vendor_id, device_type;
	int ext_16bit, ext_f16, ext_cm, ext_cm2, ext_idot, ext_bf16, ext_sgsc,
	    ext_dot2;
	VkBool32 storage_16bit, fp16_feature, cm, cm2[7], idot, idot_accel,
		 bf16, sgsc, dot2;
	uint32_t sgsc_stages, warp, shared, shared_v1, shapes;
};

static const struct {
	const char *name;
	size_t offset;
} ext_names[] = {
	{ VK_KHR_16BIT_STORAGE_EXTENSION_NAME, offsetof(struct facts, ext_16bit) },
	{ VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME, offsetof(struct facts, ext_f16) },
	{ VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME, offsetof(struct facts, ext_cm) },
	{ VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME, offsetof(struct facts, ext_cm2) },
	{ VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME, offsetof(struct facts, ext_idot) },
	{ VK_KHR_SHADER_BFLOAT16_EXTENSION_NAME, offsetof(struct facts, ext_bf16) },
	{ VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME, offsetof(struct facts, ext_sgsc) },
	{ VK_VALVE_SHADER_MIXED_FLOAT_DOT_PRODUCT_EXTENSION_NAME, offsetof(struct facts, ext_dot2) },
};
#define NEXT (sizeof(ext_names) / sizeof(ext_names[0]))

static PFN_vkVoidFunction
fn(const char *name)
{
	return gipa(instance, name);
}

static int
die(const char *msg, const char *detail)
{
	fprintf(stderr, "vulkan-capabilities: %s%s%s\n", msg,
		detail ? ": " : "", detail ? detail : "");
	return 3;
}

static void
read_extensions(VkPhysicalDevice pd, struct facts *f)
{
	PFN_vkEnumerateDeviceExtensionProperties en =
		(PFN_vkEnumerateDeviceExtensionProperties)
		fn("vkEnumerateDeviceExtensionProperties");
	VkExtensionProperties *e;
	uint32_t n = 0, i, k;

	if (!en || en(pd, NULL, &n, NULL) != VK_SUCCESS)
		return;
	e = calloc(n ? n : 1, sizeof(*e));
	if (!e || en(pd, NULL, &n, e) != VK_SUCCESS) {
		free(e);
		return;
	}
	for (i = 0; i < n; i++)
		for (k = 0; k < NEXT; k++)
			if (!strcmp(e[i].extensionName, ext_names[k].name))
				*(int *)(void *)((char *)f + ext_names[k].offset) = 1;
	free(e);
}

/* Appends s to the chain whose last link is *last. */
static void
chain(void **last, void *s, VkStructureType type)
{
	((VkBaseOutStructure *)s)->sType = type;
	((VkBaseOutStructure *)*last)->pNext = s;
	*last = s;
}

static void
read_properties(VkPhysicalDevice pd, struct facts *f)
{
	PFN_vkGetPhysicalDeviceProperties2 p2 =
		(PFN_vkGetPhysicalDeviceProperties2)fn("vkGetPhysicalDeviceProperties2");
	PFN_vkGetPhysicalDeviceProperties p1 =
		(PFN_vkGetPhysicalDeviceProperties)fn("vkGetPhysicalDeviceProperties");
	VkPhysicalDeviceProperties2 props = { 0 };
	VkPhysicalDeviceDriverProperties drv = { 0 };
	VkPhysicalDeviceSubgroupProperties sub = { 0 };
	VkPhysicalDeviceSubgroupSizeControlProperties sgsc = { 0 };
	VkPhysicalDeviceShaderIntegerDotProductProperties idot = { 0 };
	VkPhysicalDeviceProperties v1;
	void *last = &props;

	props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
	chain(&last, &drv, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES);
	chain(&last, &sub, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
	if (f->ext_sgsc)
		chain(&last, &sgsc,
		      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES);
	if (f->ext_idot)
		chain(&last, &idot,
		      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES);
	if (p2)
		p2(pd, &props);
	memcpy(f->device, props.properties.deviceName, sizeof(f->device));
	f->device[sizeof(f->device) - 1] = '\0';
	memcpy(f->driver, drv.driverName, sizeof(f->driver));
	f->driver[sizeof(f->driver) - 1] = '\0';
	f->api_version = props.properties.apiVersion;
	f->vendor_id = props.properties.vendorID;
	f->device_type = (uint32_t)props.properties.deviceType;
	f->warp = sub.subgroupSize;
	f->shared = props.properties.limits.maxComputeSharedMemorySize;
	f->sgsc_stages = sgsc.requiredSubgroupSizeStages;
	f->idot_accel = idot.integerDotProduct4x8BitPackedSignedAccelerated;
	if (p1) {
		memset(&v1, 0, sizeof(v1));
		p1(pd, &v1);
		f->shared_v1 = v1.limits.maxComputeSharedMemorySize;
	}
}

static void
read_features(VkPhysicalDevice pd, struct facts *f)
{
	VkPhysicalDeviceFeatures2 feat = { 0 };
	VkPhysicalDeviceVulkan11Features v11 = { 0 };
	VkPhysicalDeviceVulkan12Features v12 = { 0 };
	VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm = { 0 };
	VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2 = { 0 };
	VkPhysicalDeviceShaderIntegerDotProductFeatures idot = { 0 };
	VkPhysicalDeviceShaderBfloat16FeaturesKHR bf16 = { 0 };
	VkPhysicalDeviceSubgroupSizeControlFeatures sgsc = { 0 };
	VkPhysicalDeviceShaderMixedFloatDotProductFeaturesVALVE dot2 = { 0 };
	void *last = &feat;

	feat.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
	chain(&last, &v11, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
	chain(&last, &v12, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
	if (f->ext_cm)
		chain(&last, &cm, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR);
	if (f->ext_cm2)
		chain(&last, &cm2, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV);
	if (f->ext_idot)
		chain(&last, &idot, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES);
	if (f->ext_bf16)
		chain(&last, &bf16, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR);
	if (f->ext_sgsc)
		chain(&last, &sgsc, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES);
	if (f->ext_dot2)
		chain(&last, &dot2, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_MIXED_FLOAT_DOT_PRODUCT_FEATURES_VALVE);
	features2(pd, &feat);
	f->storage_16bit = v11.storageBuffer16BitAccess;
	f->fp16_feature = v12.shaderFloat16;
	f->cm = cm.cooperativeMatrix;
	f->cm2[0] = cm2.cooperativeMatrixWorkgroupScope;
	f->cm2[1] = cm2.cooperativeMatrixFlexibleDimensions;
	f->cm2[2] = cm2.cooperativeMatrixReductions;
	f->cm2[3] = cm2.cooperativeMatrixConversions;
	f->cm2[4] = cm2.cooperativeMatrixPerElementOperations;
	f->cm2[5] = cm2.cooperativeMatrixTensorAddressing;
	f->cm2[6] = cm2.cooperativeMatrixBlockLoads;
	f->idot = idot.shaderIntegerDotProduct;
	f->bf16 = bf16.shaderBFloat16Type;
	f->sgsc = sgsc.subgroupSizeControl;
	f->dot2 = dot2.shaderMixedFloatDotProductFloat16AccFloat32;
}

static void
read_shapes(VkPhysicalDevice pd, struct facts *f)
{
	PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR cp;
	uint32_t n = 0;

	if (!f->ext_cm)
		return;
	cp = (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)
		fn("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
	if (cp && cp(pd, &n, NULL) == VK_SUCCESS)
		f->shapes = n;
}

static void
query(VkPhysicalDevice pd, struct facts *f)
{
	memset(f, 0, sizeof(*f));
	read_extensions(pd, f);
	read_properties(pd, f);
	read_features(pd, f);
	read_shapes(pd, f);
}

static const char *
tf(int v)
{
	return v ? "true" : "false";
}

static const char *
type_name(uint32_t t)
{
	switch (t) {
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated-gpu";
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete-gpu";
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual-gpu";
	case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
	default: return "other";
	}
}

static void
print_facts(const struct facts *f)
{
	int cm2 = f->ext_cm2, i;

	for (i = 0; i < 7; i++)
		cm2 = cm2 && f->cm2[i];
	printf("device=%s\n", f->device);
	printf("driver=%s\n", f->driver);
	printf("device_type=%s\n", type_name(f->device_type));
	printf("vendor_id=0x%04x\n", f->vendor_id);
	printf("api_version=%u.%u.%u\n", VK_API_VERSION_MAJOR(f->api_version),
	       VK_API_VERSION_MINOR(f->api_version),
	       VK_API_VERSION_PATCH(f->api_version));
	printf("storage_16bit=%s\n", tf(f->ext_16bit && f->storage_16bit));
	printf("fp16=%s\n", tf(f->ext_16bit && f->ext_f16 && f->fp16_feature));
	printf("bf16=%s\n", tf(f->ext_bf16 && f->bf16));
	printf("int_dot=%s\n", tf(f->ext_idot && f->idot && f->idot_accel));
	printf("coopmat=%s\n", tf(f->ext_cm && f->cm));
	printf("coopmat_shapes=%u\n", f->shapes);
	printf("coopmat2=%s\n", tf(cm2));
	printf("subgroup_size_control=%s\n",
	       tf(f->ext_sgsc && f->sgsc &&
		  (f->sgsc_stages & VK_SHADER_STAGE_COMPUTE_BIT)));
	printf("dot2=%s\n", tf(f->ext_dot2 && f->dot2));
	printf("warp_size=%u\n", f->warp);
	printf("shared_memory=%u\n", f->shared);
}

/* The VkResult's name, for create_device=. */
static const char *
result_name(VkResult r)
{
	switch (r) {
	case VK_SUCCESS: return "VK_SUCCESS";
	case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
	case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
	case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
	case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
	case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
	case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
	case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
	default: return "VK_ERROR_UNKNOWN";
	}
}

/* The features --enable knows, each in its extension's structure. */
struct enables {
	VkPhysicalDeviceShaderFloat16Int8Features f16;
	VkPhysicalDeviceShaderIntegerDotProductFeatures idot;
	VkPhysicalDeviceSubgroupSizeControlFeatures sgsc;
	VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm;
	VkPhysicalDeviceShaderBfloat16FeaturesKHR bf16;
};

static const char *const feature_names[] = {
	"shaderFloat16", "shaderIntegerDotProduct", "subgroupSizeControl",
	"cooperativeMatrix", "shaderBFloat16Type", NULL,
};

static int
known_feature(const char *name)
{
	int i;

	for (i = 0; feature_names[i]; i++)
		if (!strcmp(name, feature_names[i]))
			return i;
	return -1;
}

/* Enables one feature: its structure joins the chain once. */
static void
enable_feature(struct enables *e, int which, void **last)
{
	VkBaseOutStructure *s = NULL;
	VkStructureType t = 0;

	switch (which) {
	case 0: s = (void *)&e->f16; e->f16.shaderFloat16 = VK_TRUE;
		t = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES; break;
	case 1: s = (void *)&e->idot; e->idot.shaderIntegerDotProduct = VK_TRUE;
		t = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES; break;
	case 2: s = (void *)&e->sgsc; e->sgsc.subgroupSizeControl = VK_TRUE;
		t = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES; break;
	case 3: s = (void *)&e->cm; e->cm.cooperativeMatrix = VK_TRUE;
		t = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR; break;
	default: s = (void *)&e->bf16; e->bf16.shaderBFloat16Type = VK_TRUE;
		t = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR; break;
	}
	if (s->sType != t)
		chain(last, s, t);
}

static VkResult
create_device(VkPhysicalDevice pd, char **items, int n)
{
	PFN_vkCreateDevice cd = (PFN_vkCreateDevice)fn("vkCreateDevice");
	PFN_vkGetDeviceProcAddr gdpa =
		(PFN_vkGetDeviceProcAddr)fn("vkGetDeviceProcAddr");
	VkDeviceQueueCreateInfo q = { 0 };
	VkDeviceCreateInfo ci = { 0 };
	VkBaseOutStructure head = { 0 };
	struct enables e;
	const char **exts = calloc((size_t)n + 1, sizeof(char *));
	void *last = &head;
	float prio = 1.0f;
	VkDevice dev = VK_NULL_HANDLE;
	VkResult r;
	int i;

	memset(&e, 0, sizeof(e));
	if (!cd || !exts) {
		free(exts);
		return VK_ERROR_INITIALIZATION_FAILED;
	}
	for (i = 0; i < n; i++) {
		if (!strncmp(items[i], "VK_", 3))
			exts[ci.enabledExtensionCount++] = items[i];
		else
			enable_feature(&e, known_feature(items[i]), &last);
	}
	q.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
	q.queueFamilyIndex = 0;
	q.queueCount = 1;
	q.pQueuePriorities = &prio;
	ci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
	ci.pNext = head.pNext;
	ci.queueCreateInfoCount = 1;
	ci.pQueueCreateInfos = &q;
	ci.ppEnabledExtensionNames = exts;
	r = cd(pd, &ci, NULL, &dev);
	if (r == VK_SUCCESS && gdpa) {
		PFN_vkDestroyDevice dd =
			(PFN_vkDestroyDevice)gdpa(dev, "vkDestroyDevice");
		if (dd)
			dd(dev, NULL);
	}
	free(exts);
	return r;
}

static int
usage(const char *msg)
{
	fprintf(stderr, "vulkan-capabilities: %s\nusage: vulkan-capabilities "
		"[--device N] [--enable EXTENSION|FEATURE]...\n  features: "
		"shaderFloat16 shaderIntegerDotProduct subgroupSizeControl "
		"cooperativeMatrix shaderBFloat16Type\n", msg);
	return 2;
}

/* The shim's state, when it is in this process. */
static void
print_shim(void)
{
	const char *(*st)(void) = (const char *(*)(void))
		dlsym(RTLD_DEFAULT, "vulkan_capabilities_status");
	const char *(*cfg)(void) = (const char *(*)(void))
		dlsym(RTLD_DEFAULT, "vulkan_capabilities_config");
	const char *status = st ? st() : "", *c = cfg ? cfg() : "";
	char profile[16] = "";

	/* "profile=NAME ..." when enabled; else c says why not */
	if (!strcmp(status, "enabled") && !strncmp(c, "profile=", 8))
		snprintf(profile, sizeof(profile), "%.*s",
			 (int)strcspn(c + 8, " "), c + 8);
	printf("shim_loaded=%s\n", tf(st != NULL));
	printf("shim_status=%s\n", status);
	printf("shim_profile=%s\n", profile);
	printf("shim_config=%s\n", c);
}

int
main(int argc, char **argv)
{
	PFN_vkCreateInstance ci_fn;
	PFN_vkEnumeratePhysicalDevices ep;
	VkApplicationInfo app = { 0 };
	VkInstanceCreateInfo ici = { 0 };
	VkPhysicalDevice *pds;
	struct facts a, b;
	char **enable;
	uint32_t n = 0;
	long dev = 0;
	int i, nenable = 0;
	VkResult r;

	enable = calloc((size_t)argc, sizeof(char *));
	for (i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--device") && i + 1 < argc) {
			dev = strtol(argv[++i], &end, 10);
			if (*end || end == argv[i] || dev < 0)
				return usage("--device takes a device index");
		} else if (!strcmp(argv[i], "--enable") && i + 1 < argc) {
			i++;
			if (strncmp(argv[i], "VK_", 3) && known_feature(argv[i]) < 0)
				return usage("--enable takes an extension name "
					     "(VK_...) or a feature below");
			enable[nenable++] = argv[i];
		} else {
			return usage("unknown argument");
		}
	}
	if (!dlopen("libvulkan.so.1", RTLD_NOW | RTLD_GLOBAL))
		return die("cannot load libvulkan.so.1", dlerror());
	gipa = (PFN_vkGetInstanceProcAddr)dlsym(RTLD_DEFAULT, "vkGetInstanceProcAddr");
	features2 = (PFN_vkGetPhysicalDeviceFeatures2)
		dlsym(RTLD_DEFAULT, "vkGetPhysicalDeviceFeatures2");
	if (!gipa || !features2)
		return die("libvulkan.so.1 lacks vkGetInstanceProcAddr or "
			   "vkGetPhysicalDeviceFeatures2", NULL);
	ci_fn = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
	if (!ci_fn)
		return die("no vkCreateInstance", NULL);
	app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
	app.pApplicationName = "vulkan-capabilities";
	app.apiVersion = VK_API_VERSION_1_2;
	ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
	ici.pApplicationInfo = &app;
	if ((r = ci_fn(&ici, NULL, &instance)) != VK_SUCCESS)
		return die("vkCreateInstance failed", result_name(r));
	ep = (PFN_vkEnumeratePhysicalDevices)fn("vkEnumeratePhysicalDevices");
	if (!ep || ep(instance, &n, NULL) != VK_SUCCESS || n == 0)
		return die("no Vulkan device", NULL);
	if ((uint32_t)dev >= n)
		return die("no such device", argv[0]);
	pds = calloc(n, sizeof(*pds));
	if (!pds || ep(instance, &n, pds) != VK_SUCCESS || (uint32_t)dev >= n)
		return die("cannot enumerate the devices", NULL);
	/* ggml asks twice (its startup line, then device creation). */
	query(pds[dev], &a);
	query(pds[dev], &b);
	print_facts(&a);
	printf("consistent=%s\n", tf(!memcmp(&a, &b, sizeof(a)) &&
				     a.shared == a.shared_v1));
	if (nenable)
		printf("create_device=%s\n",
		       result_name(create_device(pds[dev], enable, nenable)));
	print_shim();
	free(pds);
	free(enable);
	return fflush(stdout) == 0 ? 0 : 3;
}
