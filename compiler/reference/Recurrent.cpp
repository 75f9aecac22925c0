//===- Recurrent.cpp - simple_rnn, lstm and gru -----------------*- C++ -*-===//
//
// Keras's recurrent layers over a whole sequence (KERAS.md 2). The input
// projection x W (+ the input bias) of every step is one GEMM up front; each
// step then adds h U with the packed recurrent kernel and applies the gates.
// The state starts at zero. go_backwards walks time from the end and, with
// return_sequences, writes step s of the walk to output position s. A masked
// step (mask[n, t] false) keeps the state, and its output is the previous
// one (zeros before the first unmasked step); since every cell's output is
// its state h, both are h carried over.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/Gemm.h"
#include "compiler/reference/Kernels.h"
#include "compiler/reference/ThreadPool.h"

#include <algorithm>

using namespace mlir;
using namespace dlc::graph;
using namespace dlc::reference::detail;

namespace {

/// What every recurrent op shares: shapes, the input projection, the mask
/// and the output.
struct Sequence {
  int64_t batch, steps, units, width; // width = gates * units
  std::vector<float> projected;       // [batch, steps, width] = x W + bias
  const uint8_t *mask = nullptr;      // [batch, steps] or null
  bool backwards, allSteps;
  Buffer out;

  /// The time index of step `s` of the walk.
  int64_t time(int64_t s) const { return backwards ? steps - 1 - s : s; }
  bool active(int64_t n, int64_t t) const {
    return !mask || mask[n * steps + t] != 0;
  }
  const float *xw(int64_t n, int64_t t) const {
    return projected.data() + (n * steps + t) * width;
  }
  /// Writes h [batch, units] as the output of walk step s.
  void emit(int64_t s, const std::vector<float> &h) {
    float *y = out.mutableData<float>();
    if (allSteps) {
      for (int64_t n = 0; n < batch; ++n)
        std::copy_n(h.data() + n * units, units, y + (n * steps + s) * units);
    } else if (s == steps - 1) {
      std::copy(h.begin(), h.end(), y);
    }
  }
};

/// Shapes, mask, output and x W + `inputBias` ([width] or null).
template <typename OpT>
Sequence startSequence(OpT op, Operands operands, const float *inputBias,
                       ThreadPool &pool) {
  const Buffer &in = operands[0], &kernel = operands[1];
  Sequence seq;
  seq.batch = in.dim(0);
  seq.steps = in.dim(1);
  seq.units = operands[2].dim(0);
  seq.width = kernel.dim(1);
  seq.backwards = op.getGoBackwards();
  seq.allSteps = op.getReturnSequences();
  if (op.getMask())
    seq.mask = operands[4].data<uint8_t>();
  seq.out = Buffer::zeros(Elem::F32, resultType(op).getShape());
  const int64_t features = in.dim(2), rows = seq.batch * seq.steps;
  seq.projected.assign(rows * seq.width, 0.0f);
  MatrixB w =
      MatrixB::rowMajor(kernel.data<float>(), features, seq.width, false);
  gemm(rows, in.data<float>(), features, w, seq.projected.data(), seq.width,
       false, pool);
  if (inputBias)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < seq.width; ++j)
        seq.projected[r * seq.width + j] += inputBias[j];
  return seq;
}

/// The [units, cols] block of the recurrent kernel [units, width] starting
/// at column `col`, packed once for every step.
PackedMatrix packColumns(const Buffer &recurrent, int64_t col, int64_t cols) {
  const int64_t units = recurrent.dim(0), width = recurrent.dim(1);
  std::vector<int64_t> offsets(units);
  for (int64_t r = 0; r < units; ++r)
    offsets[r] = r * width + col;
  return packMatrix(
      MatrixB::strided(recurrent.data<float>(), std::move(offsets), cols, 1));
}

} // namespace

Buffer dlc::reference::detail::evalSimpleRnn(SimpleRnnOp op, Operands operands,
                                             ThreadPool &pool) {
  Sequence seq = startSequence(op, operands, operands[3].data<float>(), pool);
  const int64_t batch = seq.batch, units = seq.units;
  Activation act(op.getActivation());
  PackedMatrix uPacked = packColumns(operands[2], 0, units);
  MatrixB u = MatrixB::fromPacked(uPacked);
  std::vector<float> h(batch * units, 0.0f), z(batch * units);
  for (int64_t s = 0; s < seq.steps; ++s) {
    int64_t t = seq.time(s);
    for (int64_t n = 0; n < batch; ++n)
      std::copy_n(seq.xw(n, t), units, z.data() + n * units);
    gemm(batch, h.data(), units, u, z.data(), units, true, pool);
    for (int64_t n = 0; n < batch; ++n) {
      if (!seq.active(n, t))
        continue;
      for (int64_t j = 0; j < units; ++j)
        h[n * units + j] = act(z[n * units + j]);
    }
    seq.emit(s, h);
  }
  return std::move(seq.out);
}

Buffer dlc::reference::detail::evalLstm(LstmOp op, Operands operands,
                                        ThreadPool &pool) {
  Sequence seq = startSequence(op, operands, operands[3].data<float>(), pool);
  const int64_t batch = seq.batch, units = seq.units, width = seq.width;
  Activation act(op.getActivation()), gate(op.getRecurrentActivation());
  PackedMatrix uPacked = packColumns(operands[2], 0, width);
  MatrixB u = MatrixB::fromPacked(uPacked);
  std::vector<float> h(batch * units, 0.0f), c(batch * units, 0.0f);
  std::vector<float> z(batch * width);
  for (int64_t s = 0; s < seq.steps; ++s) {
    int64_t t = seq.time(s);
    for (int64_t n = 0; n < batch; ++n)
      std::copy_n(seq.xw(n, t), width, z.data() + n * width);
    gemm(batch, h.data(), units, u, z.data(), width, true, pool);
    for (int64_t n = 0; n < batch; ++n) {
      if (!seq.active(n, t))
        continue;
      const float *zn = z.data() + n * width;
      for (int64_t j = 0; j < units; ++j) {
        float i = gate(zn[j]), f = gate(zn[units + j]);
        float g = act(zn[2 * units + j]), o = gate(zn[3 * units + j]);
        float &cell = c[n * units + j];
        cell = f * cell + i * g;
        h[n * units + j] = o * act(cell);
      }
    }
    seq.emit(s, h);
  }
  return std::move(seq.out);
}

Buffer dlc::reference::detail::evalGru(GruOp op, Operands operands,
                                       ThreadPool &pool) {
  const bool resetAfter = op.getResetAfter();
  // reset_after: bias [2, 3U], row 0 on the input side, row 1 on h U.
  const float *bias = operands[3].data<float>();
  Sequence seq = startSequence(op, operands, bias, pool);
  const int64_t batch = seq.batch, units = seq.units, width = seq.width;
  const float *recurrentBias = resetAfter ? bias + width : nullptr;
  Activation act(op.getActivation()), gate(op.getRecurrentActivation());
  const Buffer &recurrent = operands[2];
  std::vector<float> h(batch * units, 0.0f), rec(batch * width);
  std::vector<float> rh(batch * units), hh(batch * units);

  if (resetAfter) {
    PackedMatrix uPacked = packColumns(recurrent, 0, width);
    MatrixB u = MatrixB::fromPacked(uPacked);
    for (int64_t s = 0; s < seq.steps; ++s) {
      int64_t t = seq.time(s);
      gemm(batch, h.data(), units, u, rec.data(), width, false, pool);
      for (int64_t n = 0; n < batch; ++n) {
        if (!seq.active(n, t))
          continue;
        const float *x = seq.xw(n, t), *r = rec.data() + n * width;
        for (int64_t j = 0; j < units; ++j) {
          float zg = gate(x[j] + (r[j] + recurrentBias[j]));
          float rg =
              gate(x[units + j] + (r[units + j] + recurrentBias[units + j]));
          float cand =
              act(x[2 * units + j] +
                  rg * (r[2 * units + j] + recurrentBias[2 * units + j]));
          float &state = h[n * units + j];
          state = zg * state + (1.0f - zg) * cand;
        }
      }
      seq.emit(s, h);
    }
    return std::move(seq.out);
  }

  // reset_after = false: hh = act(x W_h + b_h + (r h) U_h).
  PackedMatrix uzrPacked = packColumns(recurrent, 0, 2 * units);
  MatrixB uzr = MatrixB::fromPacked(uzrPacked);
  PackedMatrix uhPacked = packColumns(recurrent, 2 * units, units);
  MatrixB uh = MatrixB::fromPacked(uhPacked);
  std::vector<float> zgate(batch * units);
  for (int64_t s = 0; s < seq.steps; ++s) {
    int64_t t = seq.time(s);
    gemm(batch, h.data(), units, uzr, rec.data(), 2 * units, false, pool);
    for (int64_t n = 0; n < batch; ++n) {
      const float *x = seq.xw(n, t), *r = rec.data() + n * 2 * units;
      for (int64_t j = 0; j < units; ++j) {
        zgate[n * units + j] = gate(x[j] + r[j]);
        rh[n * units + j] =
            gate(x[units + j] + r[units + j]) * h[n * units + j];
      }
    }
    gemm(batch, rh.data(), units, uh, hh.data(), units, false, pool);
    for (int64_t n = 0; n < batch; ++n) {
      if (!seq.active(n, t))
        continue;
      const float *x = seq.xw(n, t);
      for (int64_t j = 0; j < units; ++j) {
        float cand = act(x[2 * units + j] + hh[n * units + j]);
        float zg = zgate[n * units + j];
        float &state = h[n * units + j];
        state = zg * state + (1.0f - zg) * cand;
      }
    }
    seq.emit(s, h);
  }
  return std::move(seq.out);
}
