// Structured mutations of OINF files (bundles) for fuzzing the runtime's
// bundle loader. Byte-level mutations of an OINF file are almost all
// refused by the container reader; this mutator reads the file, changes one
// value the bundle contract gives meaning to and writes a valid container
// again, so every input reaches ParseBundle's own checks:
// integer metadata scalars and NDARRAY elements (sizes, offsets, counts,
// indices) set to 0, 1, 2^31, 2^32 - 1, 2^63, 2^64 - 1 and neighbours of
// their current value; NDARRAY shapes cut or grown; strings swapped for
// other contract words; entries dropped or added; tensors resized.
#ifndef OAAXVK_TESTS_FUZZ_OINF_MUTATOR_H_
#define OAAXVK_TESTS_FUZZ_OINF_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace oaaxvk::fuzz {

// Reads `data` as an OINF file, applies 1–3 mutations chosen by `seed` and
// writes the file again into *out. False when `data` is not a readable OINF
// file or the mutated file cannot be written (the caller then falls back to
// a byte-level mutation).
bool MutateOinfBytes(const uint8_t* data, size_t size, uint64_t seed, std::vector<uint8_t>* out);

}  // namespace oaaxvk::fuzz

#endif  // OAAXVK_TESTS_FUZZ_OINF_MUTATOR_H_
