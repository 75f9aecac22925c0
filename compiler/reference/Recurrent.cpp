//===- Recurrent.cpp - simple_rnn, lstm and gru -----------------*- C++ -*-===//
//
// Keras's recurrent layers over a whole sequence (docs/keras.md). The input
// projection x W (+ the input bias) of every step is one GEMM up front; each
// step then adds h U with the packed recurrent kernel and applies the gates.
// graph.recurrence (what dlc-split-recurrent leaves of a layer op) starts
// from a projection computed by graph ops, and runs the same cell loops.
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
  std::vector<float> owned;           // the projection when computed here
  const float *projected = nullptr;   // [batch, steps, width] = x W + bias
  const uint8_t *mask = nullptr;      // [batch, steps] or null
  bool backwards, allSteps;
  Buffer out;

  /// The time index of step `s` of the walk.
  int64_t time(int64_t s) const { return backwards ? steps - 1 - s : s; }
  bool active(int64_t n, int64_t t) const {
    return !mask || mask[n * steps + t] != 0;
  }
  const float *xw(int64_t n, int64_t t) const {
    return projected + (n * steps + t) * width;
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

/// Shapes, walk, mask and output of `op` over an input [batch, steps, *].
template <typename OpT>
Sequence openSequence(OpT op, const Buffer &in, const Buffer &recurrent,
                      const Buffer *mask) {
  Sequence seq;
  seq.batch = in.dim(0);
  seq.steps = in.dim(1);
  seq.units = recurrent.dim(0);
  seq.width = recurrent.dim(1);
  seq.backwards = op.getGoBackwards();
  seq.allSteps = op.getReturnSequences();
  if (mask)
    seq.mask = mask->data<uint8_t>();
  seq.out = Buffer::zeros(Elem::F32, resultType(op).getShape());
  return seq;
}

/// A layer op's sequence: x W + `inputBias` ([width] or null) computed here.
template <typename OpT>
Sequence startSequence(OpT op, Operands operands, const float *inputBias,
                       ThreadPool &pool) {
  const Buffer &in = operands[0], &kernel = operands[1];
  Sequence seq =
      openSequence(op, in, operands[2], op.getMask() ? &operands[4] : nullptr);
  const int64_t features = in.dim(2), rows = seq.batch * seq.steps;
  seq.owned.assign(rows * seq.width, 0.0f);
  MatrixB w =
      MatrixB::rowMajor(kernel.data<float>(), features, seq.width, false);
  gemm(rows, in.data<float>(), features, w, seq.owned.data(), seq.width, false,
       pool);
  if (inputBias)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < seq.width; ++j)
        seq.owned[r * seq.width + j] += inputBias[j];
  seq.projected = seq.owned.data();
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

Buffer runSimpleRnn(Sequence seq, const Buffer &recurrent,
                    ActivationAttr activation, ThreadPool &pool) {
  const int64_t batch = seq.batch, units = seq.units;
  Activation act(activation);
  PackedMatrix uPacked = packColumns(recurrent, 0, units);
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

Buffer runLstm(Sequence seq, const Buffer &recurrent, ActivationAttr activation,
               ActivationAttr recurrentActivation, ThreadPool &pool) {
  const int64_t batch = seq.batch, units = seq.units, width = seq.width;
  Activation act(activation), gate(recurrentActivation);
  PackedMatrix uPacked = packColumns(recurrent, 0, width);
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

/// `recurrentBias` [3U] with reset_after (the bias inside the reset
/// product), null without.
Buffer runGru(Sequence seq, const Buffer &recurrent, const float *recurrentBias,
              ActivationAttr activation, ActivationAttr recurrentActivation,
              ThreadPool &pool) {
  const int64_t batch = seq.batch, units = seq.units, width = seq.width;
  Activation act(activation), gate(recurrentActivation);
  std::vector<float> h(batch * units, 0.0f), rec(batch * width);
  std::vector<float> rh(batch * units), hh(batch * units);

  if (recurrentBias) {
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

} // namespace

Buffer dlc::reference::detail::evalSimpleRnn(SimpleRnnOp op, Operands operands,
                                             ThreadPool &pool) {
  return runSimpleRnn(
      startSequence(op, operands, operands[3].data<float>(), pool), operands[2],
      op.getActivation(), pool);
}

Buffer dlc::reference::detail::evalLstm(LstmOp op, Operands operands,
                                        ThreadPool &pool) {
  return runLstm(startSequence(op, operands, operands[3].data<float>(), pool),
                 operands[2], op.getActivation(), op.getRecurrentActivation(),
                 pool);
}

Buffer dlc::reference::detail::evalGru(GruOp op, Operands operands,
                                       ThreadPool &pool) {
  // reset_after: bias [2, 3U], row 0 on the input side, row 1 on h U.
  const float *bias = operands[3].data<float>();
  Sequence seq = startSequence(op, operands, bias, pool);
  const float *recurrentBias = op.getResetAfter() ? bias + seq.width : nullptr;
  return runGru(std::move(seq), operands[2], recurrentBias, op.getActivation(),
                op.getRecurrentActivation(), pool);
}

Buffer dlc::reference::detail::evalRecurrence(RecurrenceOp op,
                                              Operands operands,
                                              ThreadPool &pool) {
  // Operands in order: input, recurrent_kernel, [recurrent_bias,] [mask].
  size_t next = 2;
  const Buffer *bias = op.getRecurrentBias() ? &operands[next++] : nullptr;
  const Buffer *mask = op.getMask() ? &operands[next++] : nullptr;
  const Buffer &in = operands[0], &recurrent = operands[1];
  Sequence seq = openSequence(op, in, recurrent, mask);
  seq.projected = in.data<float>();
  switch (op.getCell()) {
  case RecurrentCell::SimpleRnn:
    return runSimpleRnn(std::move(seq), recurrent, op.getActivation(), pool);
  case RecurrentCell::Lstm:
    return runLstm(std::move(seq), recurrent, op.getActivation(),
                   op.getRecurrentActivation(), pool);
  case RecurrentCell::Gru:
    return runGru(std::move(seq), recurrent,
                  bias ? bias->data<float>() : nullptr, op.getActivation(),
                  op.getRecurrentActivation(), pool);
  }
  return {};
}
