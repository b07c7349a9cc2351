// Shared by the one-workgroup compaction kernels (compress.comp,
// nonzero.comp; included after the bindings, local size 256): invocation i
// owns the contiguous chunk [chunk_begin(len), chunk_end(len)) of a range of
// len positions. chunk_first(n) takes the invocation's count n of selected
// positions in its chunk and returns the output slot of its first one (an
// exclusive scan over the 256 counts in shared memory; call it from uniform
// control flow). For the last invocation, chunk_first(n) + n is the total.
// Kernels whose loops must stay within the toolchain's iteration budget take
// a segment [seg_begin, seg_end) per dispatch in chunks of a given size
// instead (seg_chunk_begin / seg_chunk_end).
shared uint chunk_counts[256];
uint chunk_begin(uint len) { return min(gl_LocalInvocationID.x * ((len + 255u) / 256u), len); }
uint chunk_end(uint len) { return min(chunk_begin(len) + (len + 255u) / 256u, len); }
uint seg_chunk_begin(uint seg_begin, uint seg_end, uint chunk) {
  return min(seg_begin + gl_LocalInvocationID.x * chunk, seg_end);
}
uint seg_chunk_end(uint seg_begin, uint seg_end, uint chunk) {
  return min(seg_chunk_begin(seg_begin, seg_end, chunk) + chunk, seg_end);
}
uint chunk_first(uint n) {
  chunk_counts[gl_LocalInvocationID.x] = n;
  barrier();
  if (gl_LocalInvocationID.x == 0u) {
    uint s = 0u;
    for (uint t = 0u; t < 256u; ++t) {
      const uint c = chunk_counts[t];
      chunk_counts[t] = s;
      s += c;
    }
  }
  barrier();
  return chunk_counts[gl_LocalInvocationID.x];
}
