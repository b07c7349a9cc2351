/* A minimal ONNXIFI client in C: loads an ONNXIFI library (default: Debian's
 * wrapper /usr/lib/libonnxifi.so, which multiplexes every
 * /usr/lib/libonnxifi-*.so), finds the backend named "oaax-vulkan", asks
 * whether it can run MODEL, and runs it once on a float input of N elements
 * (x[i] = i - N/2), printing the outputs: discover -> compatibility -> init ->
 * run -> wait. Exit 0 on success.
 *
 * usage: onnxifi_discover MODEL.onnx N_INPUT N_OUTPUT [LIBRARY]
 *        (the model: one float input "x" and one float output "y") */
#include <dlfcn.h>
#include <onnx/onnxifi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOAD(name)                                                               \
  name##Function name = (name##Function)dlsym(lib, #name);                       \
  if (!name) { fprintf(stderr, "%s: %s not exported\n", path, #name); return 1; }

#define CHECK(call)                                                             \
  do {                                                                          \
    onnxStatus s_ = (call);                                                     \
    if (s_ != ONNXIFI_STATUS_SUCCESS) {                                         \
      fprintf(stderr, "%s failed: status 0x%04X\n", #call, (unsigned)s_);       \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODEL.onnx N_INPUT N_OUTPUT [LIBRARY]\n", argv[0]);
    return 2;
  }
  const char* path = argc > 4 ? argv[4] : "/usr/lib/libonnxifi.so";
  const size_t n_in = (size_t)atol(argv[2]), n_out = (size_t)atol(argv[3]);
  FILE* f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 1; }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* model = malloc((size_t)size);
  if (!model || fread(model, 1, (size_t)size, f) != (size_t)size) { fprintf(stderr, "cannot read %s\n", argv[1]); return 1; }
  fclose(f);

  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
  LOAD(onnxGetBackendIDs) LOAD(onnxReleaseBackendID) LOAD(onnxGetBackendInfo) LOAD(onnxGetBackendCompatibility)
  LOAD(onnxInitBackend) LOAD(onnxReleaseBackend) LOAD(onnxInitEvent) LOAD(onnxSignalEvent) LOAD(onnxWaitEvent)
  LOAD(onnxReleaseEvent) LOAD(onnxInitGraph) LOAD(onnxSetGraphIO) LOAD(onnxRunGraph) LOAD(onnxReleaseGraph)

  /* 1. discover: FALLBACK with the count, then the IDs */
  size_t count = 0;
  if (onnxGetBackendIDs(NULL, &count) != ONNXIFI_STATUS_FALLBACK) { fprintf(stderr, "no FALLBACK\n"); return 1; }
  onnxBackendID* ids = calloc(count ? count : 1, sizeof *ids);
  CHECK(onnxGetBackendIDs(ids, &count));
  onnxBackendID id = NULL;
  for (size_t i = 0; i < count; ++i) {
    char name[64] = "", device[256] = "";
    size_t n = sizeof name, d = sizeof device;
    if (onnxGetBackendInfo(ids[i], ONNXIFI_BACKEND_NAME, name, &n) != ONNXIFI_STATUS_SUCCESS) continue;
    if (onnxGetBackendInfo(ids[i], ONNXIFI_BACKEND_DEVICE, device, &d) != ONNXIFI_STATUS_SUCCESS) continue;
    printf("backend %zu: %s on %s\n", i, name, device);
    if (!id && strcmp(name, "oaax-vulkan") == 0) id = ids[i];
  }
  if (!id) {
    fprintf(stderr,
            "no oaax-vulkan backend among the %zu backend(s) %s offers: install the backend for it "
            "(sudo install -m 644 build/libonnxifi-vulkan.so /usr/lib/libonnxifi-vulkan.so) or pass the "
            "backend library itself as LIBRARY (build/libonnxifi-vulkan.so)\n",
            count, path);
    return 1;
  }

  /* 2. compatibility: SUCCESS only for a model the backend runs */
  CHECK(onnxGetBackendCompatibility(id, (size_t)size, model));

  /* 3. init backend and graph (weights from the model's initializers) */
  onnxBackend backend;
  const uint64_t props[] = {ONNXIFI_BACKEND_PROPERTY_NONE};
  CHECK(onnxInitBackend(id, props, &backend));
  onnxGraph graph;
  CHECK(onnxInitGraph(backend, NULL, (size_t)size, model, 0, NULL, &graph));
  free(model);  /* the backend copied what it needs */

  /* 4. bind inputs and outputs */
  float* x = malloc(n_in * sizeof *x);
  float* y = calloc(n_out, sizeof *y);
  for (size_t i = 0; i < n_in; ++i) x[i] = (float)i - (float)(n_in / 2);
  uint64_t shape_in[1] = {n_in}, shape_out[1] = {n_out};
  onnxTensorDescriptorV1 in = {ONNXIFI_TAG_TENSOR_DESCRIPTOR_V1, "x", ONNXIFI_DATATYPE_FLOAT32,
                               ONNXIFI_MEMORY_TYPE_CPU, 1, shape_in, (onnxPointer)x};
  onnxTensorDescriptorV1 out = {ONNXIFI_TAG_TENSOR_DESCRIPTOR_V1, "y", ONNXIFI_DATATYPE_FLOAT32,
                                ONNXIFI_MEMORY_TYPE_CPU, 1, shape_out, (onnxPointer)y};
  CHECK(onnxSetGraphIO(graph, 1, &in, 1, &out));

  /* 5. run (asynchronous) and wait */
  onnxMemoryFenceV1 input_fence = {ONNXIFI_TAG_MEMORY_FENCE_V1, ONNXIFI_SYNCHRONIZATION_EVENT, {NULL}};
  onnxMemoryFenceV1 output_fence = {ONNXIFI_TAG_MEMORY_FENCE_V1, ONNXIFI_SYNCHRONIZATION_EVENT, {NULL}};
  CHECK(onnxInitEvent(backend, &input_fence.event));
  CHECK(onnxRunGraph(graph, &input_fence, &output_fence)); /* returns at once */
  CHECK(onnxSignalEvent(input_fence.event));               /* inputs are ready */
  CHECK(onnxWaitEvent(output_fence.event));                /* the run's status */
  printf("y =");
  for (size_t i = 0; i < n_out; ++i) printf(" %g", y[i]);
  printf("\n");

  onnxReleaseEvent(output_fence.event);
  onnxReleaseEvent(input_fence.event);
  onnxReleaseGraph(graph);
  onnxReleaseBackend(backend);
  for (size_t i = 0; i < count; ++i) onnxReleaseBackendID(ids[i]);
  free(ids);
  free(x);
  free(y);
  return 0;
}
