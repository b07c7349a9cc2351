/*
 * OAAX runtime interface (spec: ../shared/seeds/000_53e63a89dc5e96f0.txt,
 * "OAAX Runtime Specification"), as implemented by libRuntimeLibrary.so.
 *
 * Pure C API, usable from C and C++. A host loads the runtime with
 * dlopen/dlsym; the library exports exactly the nine functions below and no
 * other symbol (spec section 2).
 *
 * Error convention: every int-returning function returns 0 on success and a
 * non-zero value on failure; runtime_error_message() then describes the
 * failure of the calling thread (function, tensor, Vulkan call, VK_ERROR_*).
 *
 * Memory: host and runtime share the C heap. Every field of a tensors_struct
 * (each names[i], shapes[i], data[i], the five arrays, and the struct itself)
 * is a separate malloc() allocation, released with free() (spec section 5).
 */
#ifndef OAAX_VULKAN_INTERFACE_H_
#define OAAX_VULKAN_INTERFACE_H_

#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Tensor element types (spec 3.1). Values are part of the ABI. */
typedef enum tensor_data_type {
  DATA_TYPE_FLOAT = 1,   /* IEEE-754 binary32 */
  DATA_TYPE_UINT8 = 2,
  DATA_TYPE_INT8 = 3,
  DATA_TYPE_UINT16 = 4,
  DATA_TYPE_INT16 = 5,
  DATA_TYPE_INT32 = 6,
  DATA_TYPE_INT64 = 7,
  DATA_TYPE_STRING = 8,  /* not supported by this runtime */
  DATA_TYPE_BOOL = 9,    /* one byte per element, 0 or 1 */
  DATA_TYPE_FLOAT16 = 10, /* IEEE-754 binary16 (extension: the ONNX code; not in the OAAX spec) */
  DATA_TYPE_DOUBLE = 11, /* IEEE-754 binary64 */
  DATA_TYPE_UINT32 = 12,
  DATA_TYPE_UINT64 = 13,
  DATA_TYPE_BFLOAT16 = 16, /* bfloat16: the high half of a binary32 (extension: the ONNX code) */
  /* Low-bit types (extensions: the ONNX codes and encodings). The 8-bit
   * floats take one byte per element: E4M3FN (bias 7, max 448, NaN
   * S.1111.111, no Inf), E4M3FNUZ (bias 8, max 240, the only NaN 0x80, no -0,
   * no Inf), E5M2 (bias 15, max 57344, IEEE-like Inf and NaN), E5M2FNUZ
   * (bias 16, max 57344, the only NaN 0x80, no -0, no Inf), E8M0 (an unsigned
   * exponent: 2^(bits - 127), 0xFF NaN, no zero). The 4-bit types take half a
   * byte: two elements per byte, element 2i in the low nibble and 2i+1 in the
   * high nibble, so a tensor of n elements takes (n + 1) / 2 bytes (the last
   * high nibble of an odd count is 0); UINT4 is 0..15, INT4 two's complement
   * -8..7, FLOAT4E2M1 sign, 2 exponent bits (bias 1), 1 mantissa bit, max 6,
   * no Inf or NaN. oaaxvk::TensorByteSize (tensors_util.h) computes a
   * tensor's bytes for every type. */
  DATA_TYPE_FLOAT8E4M3FN = 17,
  DATA_TYPE_FLOAT8E4M3FNUZ = 18,
  DATA_TYPE_FLOAT8E5M2 = 19,
  DATA_TYPE_FLOAT8E5M2FNUZ = 20,
  DATA_TYPE_UINT4 = 21,
  DATA_TYPE_INT4 = 22,
  DATA_TYPE_FLOAT4E2M1 = 23,
  DATA_TYPE_FLOAT8E8M0 = 24
} tensor_data_type;

/* A set of tensors (spec 3.2). All arrays have num_tensors elements;
 * shapes[i] has ranks[i] elements (dimension sizes); data[i] holds the
 * product of shapes[i] elements of data_types[i], dense, row-major, in host
 * (little-endian) byte order (4-bit types packed two per byte, see above). names[i] are unique, NUL-terminated UTF-8. */
typedef struct tensors_struct {
  size_t num_tensors;           /* number of tensors */
  char** names;                 /* tensor names (UTF-8) */
  tensor_data_type* data_types; /* element type per tensor */
  size_t* ranks;                /* number of dimensions per tensor */
  size_t** shapes;              /* shapes[i][0 .. ranks[i]-1] */
  void** data;                  /* raw element data per tensor */
} tensors_struct;

/* Spec 4.1. Initializes the runtime with default settings: picks a Vulkan
 * device (discrete GPU, then integrated, virtual, CPU), creates a device with
 * a compute queue. Call once before any other function (or use
 * runtime_initialization_with_args instead). Fails when no Vulkan device is
 * usable or the runtime is already initialized (call runtime_destruction
 * first). Returns 0 on success. */
int runtime_initialization(void);

/* Spec 4.2. Same as runtime_initialization, with `length` key/value pairs.
 * keys[i] are NUL-terminated; values[i] are read as NUL-terminated strings
 * (const char*) and must stay valid only during the call. Unknown keys are
 * ignored. Known keys (see README):
 *   log_level          "0".."6" (trace, debug, info, warn, error, critical, off); default 3
 *   log_file           path; log lines are appended there instead of stderr
 *   device             device index ("0") or case-insensitive substring of its name
 *   frames_in_flight   frame slots (1..16); default 2
 *   receive_timeout_ms bound of every wait for the device, milliseconds; default 5000
 *   validation         "1" enables VK_LAYER_KHRONOS_validation when installed
 *   pipeline_cache     "auto" (default, also ""): a persistent VkPipelineCache file per bundle,
 *                      device and driver version in pipeline_cache_dir, read at load and written
 *                      (through a temporary file + rename) after creating the pipelines and, when
 *                      changed, at destruction; an unusable file is ignored with a warning.
 *                      "off" or "0": no cache. Any other value: that file (its directory must exist)
 *   pipeline_cache_dir directory of the "auto" cache files (created when missing); default
 *                      $XDG_CACHE_HOME/oaax-vulkan, or $HOME/.cache/oaax-vulkan
 *   load_warmup        "1" (default): runtime_model_loading dispatches every pipeline once (one
 *                      workgroup each, zeroed inputs), so drivers that compile shaders at their
 *                      first dispatch (lavapipe) do it during loading and send_input only runs;
 *                      "0" skips it
 *   profile            "1": time every dispatch with timestamp queries and, when each frame is
 *                      received, log (info level, so log_level <= 2) one line per dispatch in
 *                      microseconds (kernel, group counts, ONNX op), the 15 slowest dispatches
 *                      and per-kernel totals; needs timestampValidBits > 0 on the compute queue
 *                      (otherwise a warning and no profile); default "0" (nothing recorded)
 *   kernel_variant     "auto" (default), "default", "gpu" or "cpu": for bundles carrying kernel
 *                      variants (features kernel_variants and device_variants,
 *                      docs/bundle-format.md), which dispatch table runs; auto = the CPU table on
 *                      VK_PHYSICAL_DEVICE_TYPE_CPU devices (lavapipe, SwiftShader), the GPU table
 *                      (fp16 weights, subgroup operations) elsewhere; default = program.dispatch
 *                      only; gpu / cpu = that table on any device. A row whose kernel needs a
 *                      capability the device lacks keeps its default row; ignored for bundles
 *                      without variants
 *   fp16_weights       "1": rows of the chosen table that read binary16 weight copies (weights_f16;
 *                      fp32 accumulation, half the weight bytes) may run on devices with
 *                      storageBuffer16BitAccess; results then differ from fp32 within the bound of
 *                      docs/bundle-format.md "Device-specific variants". Default "0": those rows keep
 *                      their default row and results stay fp32
 *   shape_cache_size   "1".."1024", default "8": for bundles compiled for a range of input shapes
 *                      (feature dynamic_shapes, docs/bundle-format.md), how many command buffers,
 *                      one per shape (tuple of symbol values), each frame slot keeps. A repeated shape
 *                      records nothing; a new shape is recorded (pipelines specialized for it are
 *                      created then) and evicts the slot's least recently used one, whose
 *                      pipelines are destroyed once no cached shape uses them. Ignored for static
 *                      bundles (one command buffer per slot, recorded at load)
 * A malformed value of a known key is an error. Returns 0 on success. */
int runtime_initialization_with_args(int length, const char** keys, const void** values);

/* Spec 4.3. Loads a bundle (model.oinf, docs/bundle-format.md) from
 * `file_path`: validates it completely and against the device limits before
 * allocating device memory, uploads weights, creates pipelines (in parallel,
 * through the pipeline cache), records one command buffer per frame slot and
 * (load_warmup) dispatches every pipeline once, so that every shader
 * compilation happens here and inference only runs. One model per initialized runtime: a second
 * call fails. Returns 0 on success. */
int runtime_model_loading(const char* file_path);

/* Spec 4.4. Queues one inference. The whole struct is validated first (NULL
 * pointers, tensor count, names matched by name in any order, data type, rank,
 * shape against the model inputs: for a bundle with dynamic shapes each
 * symbolic dimension within its range and multiple, and equal wherever the
 * symbol occurs; data[i] holds the tensor at its actual shape); on failure
 * nothing is taken and the caller keeps ownership of `input_tensors`. On success the runtime copies the data
 * into a free frame slot, submits it, and frees every field with free().
 * When every frame slot is busy it first waits (at most receive_timeout_ms)
 * for the oldest frame and keeps its outputs for receive_output.
 * Returns 0 on success. */
int send_input(tensors_struct* input_tensors);

/* Spec 4.5. Returns the outputs of the oldest input not yet received (FIFO),
 * each at its actual shape (for a bundle with dynamic shapes, the one its
 * input shapes imply).
 * Waits at most receive_timeout_ms for that frame; fails at once with
 * "no pending input" when nothing is queued (leaving *output_tensors
 * untouched). On success *output_tensors is a newly malloc'ed struct (every
 * field a separate malloc, original ONNX names); the caller frees it.
 * Returns 0 on success. */
int receive_output(tensors_struct** output_tensors);

/* Spec 4.6. Waits for the device, releases the model and every Vulkan object.
 * Pending outputs are discarded. Afterwards the runtime may be initialized
 * again. Fails when validation was enabled and the validation layer reported
 * messages (the first one is quoted). Returns 0 on success. */
int runtime_destruction(void);

/* Spec 4.7. The last error of the calling thread ("" if none). Owned by the
 * runtime; valid until the next runtime call on this thread. */
const char* runtime_error_message(void);

/* Spec 4.8. "<project version> (<Vulkan device name>)", e.g.
 * "0.1.0 (llvmpipe (LLVM 15.0.6, 256 bits))"; "(no device)" before
 * initialization. Owned by the runtime. */
const char* runtime_version(void);

/* Spec 4.9. "OAAX Vulkan Runtime". Static storage. */
const char* runtime_name(void);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* OAAX_VULKAN_INTERFACE_H_ */
