//===- Artifact.h - the .dlcm artifact format -------------------*- C++ -*-===//
//
// The contract between the compiler and the runtime: one compiled model in
// one file, written by `dlc compile` and read by the runtime and `dlc
// inspect`. Plain C++ (no CUDA, no LLVM, no MLIR): the compiler links the
// writer from here and the runtime the reader. The calls into cuBLASLt and
// cuDNN that an artifact may contain are described by the schema of
// artifact/LibraryCall.h. docs/artifact.md describes the format in full.
//
// Layout (little-endian):
//   [0, 128)    header: magic "DLCM\r\n\x1a\n", format version, header size,
//               payload size, SHA-256 of the payload, dlc version, archs, the
//               PTX arch
//   [128, 136)  manifest size M
//   [136, +M)   manifest: a JSON object (tensors, buffers, kernels with their
//               launch parameters and resources, library calls, the program)
//   [D, end)    data, D = 128 + 8 + M rounded up to kAlignment: the weight
//               blob, the cubins and the PTX, each at a kAlignment-aligned
//               offset relative to D that the manifest records
// The payload is everything after the header; its checksum is verified before
// any of it is parsed. Every size and offset is checked against the file
// before anything is allocated or copied.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_ARTIFACT_ARTIFACT_H
#define DLC_ARTIFACT_ARTIFACT_H

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dlc::artifact {

constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 128;
constexpr size_t kMaxArchs = 12;
constexpr size_t kMaxRank = 8;

/// The one alignment of the format, in bytes: the data section and every
/// blob in it, and what the runtime guarantees for each region a kernel or
/// library call reads or writes (the arena, the weights and the caller's
/// input and output buffers, which dlcSessionRun checks). The
/// compiler's memory plan places buffers at multiples of it too
/// (exec::kAlignment is this constant).
constexpr uint64_t kAlignment = 256;

/// `value` rounded up to a multiple of kAlignment.
constexpr uint64_t alignUp(uint64_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}

/// A malformed artifact, or an invalid one handed to the writer. The message
/// is one line and names no file.
class FormatError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

enum class ElementType : uint8_t { F32, F16, BF16, I32, I64, Bool };

/// NumPy's names: "float32", "float16", "bfloat16", "int32", "int64", "bool".
const char *elementTypeName(ElementType type);
size_t elementTypeSize(ElementType type);
std::optional<ElementType> parseElementType(std::string_view name);

/// A model input or output, in the model's order.
struct TensorSpec {
  std::string name;
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  /// Where kernels find the tensor: -1 for the caller's buffer (kernel
  /// parameters in region Input/Output), else a byte offset in the arena that
  /// the runtime copies the caller's input into before the program (or the
  /// output out of, after it).
  int64_t arenaOffset = -1;

  /// Element count times element size (validated not to overflow).
  uint64_t bytes() const;
};

enum class Region : uint8_t { Arena, Weights, Input, Output };

/// "arena", "weights", "input", "output".
const char *regionName(Region region);

/// The bytes one kernel or library call parameter points to.
struct BufferRef {
  Region region = Region::Arena;
  uint32_t index = 0;  ///< the input's or output's position (Input, Output)
  uint64_t offset = 0; ///< from the start of the region (or tensor)
  uint64_t bytes = 0;

  friend bool operator==(const BufferRef &a, const BufferRef &b) {
    return a.region == b.region && a.index == b.index && a.offset == b.offset &&
           a.bytes == b.bytes;
  }
};

/// The alignment, in bytes, that the address of `ref` is known to have: its
/// region starts kAlignment-aligned, so it is the largest power of two up to
/// kAlignment that divides its offset.
uint32_t alignmentOf(const BufferRef &ref);

/// What ptxas reported for one kernel on one arch.
struct KernelResources {
  uint32_t arch = 0; ///< 80 for sm_80
  uint32_t registers = 0;
  uint32_t sharedBytes = 0; ///< static shared memory
  uint32_t localBytes = 0;  ///< stack frame (local memory) per thread
  uint32_t spillStoreBytes = 0;
  uint32_t spillLoadBytes = 0;

  friend bool operator==(const KernelResources &a, const KernelResources &b) {
    return a.arch == b.arch && a.registers == b.registers &&
           a.sharedBytes == b.sharedBytes && a.localBytes == b.localBytes &&
           a.spillStoreBytes == b.spillStoreBytes &&
           a.spillLoadBytes == b.spillLoadBytes;
  }
};

/// The work of one step of the program (compiler/codegen/Cost.h counts it):
/// floating-point operations (a multiply-add is 2) and the bytes its
/// parameters hold, each read or written once. For `dlc bench`'s achieved
/// FLOP/s and bandwidth; informational, not validated against the kernels.
struct StepCost {
  uint64_t flops = 0;
  uint64_t bytes = 0;

  friend bool operator==(const StepCost &a, const StepCost &b) {
    return a.flops == b.flops && a.bytes == b.bytes;
  }
};

/// One generated kernel: launch parameters, code for every arch, resources.
struct Kernel {
  std::string name;   ///< "k3_conv2d"
  std::string entry;  ///< the extern "C" __global__ function
  std::string family; ///< "gemm_tc", "elementwise", ...
  std::string tiling; ///< "BM=128 BN=128 BK=32 stages=3", or ""
  std::vector<std::string> layers;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t dynamicSharedBytes = 0;
  /// One per kernel parameter, in the ABI's order: the first `numIns` are
  /// read, the rest written.
  std::vector<BufferRef> params;
  uint32_t numIns = 0;
  /// One per arch of the artifact, in the artifact's arch order.
  std::vector<std::string> cubins;
  std::vector<KernelResources> resources;
  /// PTX for the artifact's ptxArch (JIT on newer GPUs); "" when it has none.
  std::string ptx;
  /// The manifest's optional `cost`; none in artifacts older than it.
  std::optional<StepCost> cost;
};

/// A cuBLASLt / cuDNN call. The format carries any library and op with any
/// JSON object as its descriptor, so that every reader can read (and `dlc
/// inspect` show) a call it does not know; artifact/LibraryCall.h is the
/// schema of the calls dlc knows, which the compiler writes through and the
/// runtime parses (and checks against `params`) when a model loads.
struct LibraryCall {
  std::string name;    ///< "l4_conv2d"
  std::string library; ///< "cublaslt" or "cudnn"
  std::string op;      ///< "gemm", "conv2d", "pool2d", "softmax", "sdpa"
  std::vector<std::string> layers;
  /// A JSON object: the call's parameters (toJson of LibraryCall.h). The
  /// writer copies it into the manifest as parsed, keys in its order.
  std::string descriptor;
  std::vector<BufferRef> params;
  uint64_t workspaceBytes = 0;
  /// The manifest's optional `cost`; none in artifacts older than it.
  std::optional<StepCost> cost;
};

/// One step of the program: a kernel launch or a library call.
struct Step {
  enum class Kind : uint8_t { Kernel, LibraryCall };
  Kind kind = Kind::Kernel;
  uint32_t index = 0; ///< into Artifact::kernels or Artifact::libraryCalls

  friend bool operator==(const Step &a, const Step &b) {
    return a.kind == b.kind && a.index == b.index;
  }
};

/// A whole artifact, as the writer takes it and the reader returns it.
struct Artifact {
  std::string dlcVersion;      ///< the writer fills in its own when empty
  std::vector<uint32_t> archs; ///< ascending: {80, 90} for sm_80, sm_90
  uint32_t ptxArch = 0;        ///< compute_XX of the kernels' PTX, 0: none
  std::string source;          ///< the model file it was compiled from
  std::string precision;       ///< "fp32" or "fp16"
  std::vector<TensorSpec> inputs, outputs;
  uint64_t arenaBytes = 0;
  std::string weights; ///< the weight region's initial bytes
  /// Non-zero: the file carries no weight bytes (`dlc compile --no-weights`,
  /// for timing): `weights` is empty and the weight region has this size.
  /// The runtime fills it with zeros only when asked (DLC_WEIGHTS_SYNTHETIC).
  uint64_t omittedWeightsBytes = 0;
  std::vector<Kernel> kernels;
  std::vector<LibraryCall> libraryCalls;
  /// The order of execution. The writer fills in every kernel in order when
  /// it is empty.
  std::vector<Step> program;
};

/// The size of the weight region: the weights' bytes, or
/// omittedWeightsBytes.
uint64_t weightRegionBytes(const Artifact &artifact);

/// The furthest byte of the weight region that a step reads.
uint64_t weightsReached(const Artifact &artifact);

/// Checks an artifact's internal consistency (what the reader checks after
/// parsing): archs, shapes, launch dimensions, every buffer inside its
/// region, code for every arch. Sizes that no bytes of the file back are
/// bounded by what the program uses: the arena by the furthest byte a step
/// or an arena-resident tensor reaches (rounded up to kAlignment), and an
/// output that kernels write in the caller's buffer must be reached to its
/// last byte, so that a manifest cannot declare an enormous output that
/// nothing writes. Throws FormatError.
void validate(const Artifact &artifact);

/// What one session of an artifact allocates, in bytes: the arena, the
/// weights (once per device), a buffer per input and output (kAlignment-
/// aligned, as dlcSessionRunHost stages them and `dlc run` holds them on
/// the host) and the largest library-call workspace.
struct MemoryUse {
  uint64_t arena = 0, weights = 0, inputs = 0, outputs = 0, workspace = 0;
  /// The sum, saturated at UINT64_MAX.
  uint64_t total() const;
};
MemoryUse memoryUse(const Artifact &artifact);

/// The memory limit readers apply when none is given (the runtime's
/// DLC_MAX_MEMORY and dlcLoadOptions set another): 64 GiB.
constexpr uint64_t kDefaultMemoryLimit = uint64_t(64) << 30;

/// Refuses an artifact that would make a reader allocate more than `limit`
/// bytes: throws FormatError naming the field ("outputs[0].shape: ...") when
/// one alone exceeds it, else the total. `limitSource` says where the limit
/// came from ("DLC_MAX_MEMORY"), for the message; "" for nothing.
void checkMemoryLimit(const Artifact &artifact, uint64_t limit,
                      const std::string &limitSource = "");

/// The bytes of the .dlcm file. Validates first; throws FormatError.
std::string serialize(const Artifact &artifact);

/// Parses a .dlcm file: header, checksum, version, manifest, every range.
/// Throws FormatError with a one-line reason; reads nothing outside `bytes`
/// and allocates no more than a small multiple of bytes.size().
Artifact parse(std::string_view bytes);

/// The "0.1.0" of this build, written into artifacts.
const char *libraryVersion();

} // namespace dlc::artifact

#endif // DLC_ARTIFACT_ARTIFACT_H
