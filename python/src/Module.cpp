//===- Module.cpp - dlc._dlc, the nanobind extension module ---------------===//
//
// The thin layer between Python and the compiler (Model.h): NumPy arrays in
// and out, dlc::UserError as dlc.Error carrying dlc's one-line message. The
// Keras-like API (dlc/__init__.py) is written in Python on top of it.
//
//===----------------------------------------------------------------------===//

#include "artifact/Artifact.h"
#include "frontends/keras/reader/Isolation.h"
#include "python/src/Gpu.h"
#include "python/src/Model.h"
#include "support/Error.h"
#include "support/File.h"
#include "tools/dlc/RuntimeInputs.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstring>

namespace nb = nanobind;
using namespace dlc;
using namespace dlc::python;

namespace {

using CpuArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using CudaArray = nb::ndarray<nb::c_contig, nb::device::cuda>;

DType dtypeOf(const nb::dlpack::dtype &t) {
  using Code = nb::dlpack::dtype_code;
  if (t.lanes == 1) {
    switch (static_cast<Code>(t.code)) {
    case Code::Float:
      if (t.bits == 32)
        return DType::F32;
      if (t.bits == 16)
        return DType::F16;
      if (t.bits == 64)
        return DType::F64;
      break;
    case Code::Bfloat:
      if (t.bits == 16)
        return DType::BF16;
      break;
    case Code::Int:
      if (t.bits == 8)
        return DType::I8;
      if (t.bits == 16)
        return DType::I16;
      if (t.bits == 32)
        return DType::I32;
      if (t.bits == 64)
        return DType::I64;
      break;
    case Code::UInt:
      if (t.bits == 8)
        return DType::U8;
      if (t.bits == 16)
        return DType::U16;
      break;
    case Code::Bool:
      return DType::Bool;
    default:
      break;
    }
  }
  throw UserError("an array of an element type dlc does not read (code " +
                  std::to_string(t.code) + ", " + std::to_string(t.bits) +
                  " bits)");
}

nb::dlpack::dtype dlpackOf(DType d) {
  switch (d) {
  case DType::F32:
    return nb::dtype<float>();
  case DType::F64:
    return nb::dtype<double>();
  case DType::F16:
    return {uint8_t(nb::dlpack::dtype_code::Float), 16, 1};
  case DType::BF16:
    return {uint8_t(nb::dlpack::dtype_code::Bfloat), 16, 1};
  case DType::I8:
    return nb::dtype<int8_t>();
  case DType::U8:
    return nb::dtype<uint8_t>();
  case DType::I16:
    return nb::dtype<int16_t>();
  case DType::U16:
    return nb::dtype<uint16_t>();
  case DType::I32:
    return nb::dtype<int32_t>();
  case DType::I64:
    return nb::dtype<int64_t>();
  case DType::Bool:
    return nb::dtype<bool>();
  }
  return nb::dtype<float>();
}

Tensor tensorOf(const CpuArray &a) {
  std::vector<int64_t> shape;
  for (size_t i = 0; i < a.ndim(); ++i)
    shape.push_back(static_cast<int64_t>(a.shape(i)));
  Tensor t(dtypeOf(a.dtype()), shape);
  if (t.bytes())
    std::memcpy(t.raw(), a.data(), t.bytes());
  return t;
}

/// A NumPy array that owns `t`.
nb::object numpyOf(Tensor t) {
  auto *owned = new Tensor(std::move(t));
  nb::capsule owner(owned,
                    [](void *p) noexcept { delete static_cast<Tensor *>(p); });
  std::vector<size_t> shape(owned->shape().begin(), owned->shape().end());
  nb::ndarray<nb::numpy> array(owned->raw(), shape.size(), shape.data(), owner,
                               nullptr, dlpackOf(owned->dtype()));
  return array.cast();
}

nb::list infoList(const std::vector<TensorInfo> &infos) {
  nb::list list;
  for (const TensorInfo &i : infos) {
    nb::list shape;
    for (int64_t d : i.shape)
      shape.append(d < 0 ? nb::none() : nb::int_(d));
    list.append(nb::make_tuple(i.name, nb::tuple(shape), i.dtype));
  }
  return list;
}

nb::list stepList(const std::vector<StepInfo> &steps) {
  nb::list list;
  for (const StepInfo &s : steps) {
    nb::dict d;
    d["name"] = s.name;
    d["family"] = s.family;
    d["tiling"] = s.tiling;
    d["layers"] = s.layers;
    d["library_call"] = s.libraryCall;
    list.append(d);
  }
  return list;
}

nb::dict memoryDict(const MemoryInfo &info) {
  nb::dict d;
  d["arena_bytes"] = info.arenaBytes;
  d["peak_live_bytes"] = info.peakLiveBytes;
  d["weights_bytes"] = info.weightsBytes;
  return d;
}

} // namespace

NB_MODULE(_dlc, m) {
  m.doc() = "dlc's compiler and reference executor (use the dlc package)";

  static nb::object error =
      nb::exception<UserError>(m, "Error", PyExc_Exception);
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const UserError &e) {
      PyErr_SetString(error.ptr(), e.format().c_str());
    }
  });

  // The package gives its dlc-read-model: model files are read in a fresh
  // process of it, never in a fork of the (multi-threaded) interpreter.
  m.def("_set_reader_program",
        [](const std::string &path) { keras::setReaderProgram(path); });

  nb::class_<Model>(m, "Model")
      .def_prop_ro("inputs",
                   [](const Model &model) { return infoList(model.inputs()); })
      .def_prop_ro("outputs",
                   [](const Model &model) { return infoList(model.outputs()); })
      .def_prop_ro("fp16", &Model::fp16)
      .def("memory",
           [](const Model &model) { return memoryDict(model.memory()); })
      .def("run_cpu",
           [](Model &model, const std::vector<CpuArray> &arrays) {
             std::vector<Tensor> inputs;
             for (const CpuArray &a : arrays)
               inputs.push_back(tensorOf(a));
             std::vector<Tensor> results;
             {
               nb::gil_scoped_release release;
               results = model.runCpu(std::move(inputs));
             }
             nb::list out;
             for (Tensor &r : results)
               out.append(numpyOf(std::move(r)));
             return out;
           })
      .def(
          "artifact",
          [](Model &model, std::optional<int64_t> batch) {
            const std::string *bytes;
            {
              nb::gil_scoped_release release;
              bytes = &model.artifactBytes(batch);
            }
            return nb::bytes(bytes->data(), bytes->size());
          },
          nb::arg("batch").none() = nb::none())
      .def("steps",
           [](Model &model) {
             const std::vector<StepInfo> *steps;
             {
               nb::gil_scoped_release release;
               steps = &model.steps();
             }
             return stepList(*steps);
           })
      .def("compare",
           [](Model &model, const std::vector<CpuArray> &arrays,
              const std::string &stage, double threshold) {
             std::vector<Tensor> inputs;
             for (const CpuArray &a : arrays)
               inputs.push_back(tensorOf(a));
             LayerOutputs outs;
             {
               nb::gil_scoped_release release;
               outs = model.compare(std::move(inputs), stage, threshold);
             }
             auto rows = [](std::vector<LayerOutput> &values) {
               nb::list list;
               for (LayerOutput &v : values)
                 list.append(nb::make_tuple(v.layer, v.layerClass,
                                            numpyOf(std::move(v.value))));
               return list;
             };
             nb::dict d;
             d["stage"] = outs.stage;
             d["reference"] = rows(outs.reference);
             d["compiled"] = rows(outs.compiled);
             return d;
           })
      .def("take_warnings", &Model::takeWarnings);

  m.def(
      "diff_layer",
      [](const CpuArray &actual, const CpuArray &expected,
         double threshold) -> nb::object {
        std::optional<LayerDiffInfo> d =
            diffLayer(tensorOf(actual), tensorOf(expected), threshold);
        if (!d)
          return nb::none();
        nb::dict r;
        r["shape"] = d->shape;
        r["max_abs"] = d->maxAbs;
        r["rel_l2"] = d->relL2;
        r["exceeds"] = d->exceeds;
        return r;
      },
      nb::arg("actual"), nb::arg("expected"), nb::arg("threshold"));

  m.def("cuda_available", []() {
    std::string why;
    bool ok = cudaAvailable(&why);
    return nb::make_tuple(ok, why);
  });

  nb::class_<GpuModel>(m, "GpuModel")
      .def(
          "__init__",
          [](GpuModel *self, nb::bytes bytes, const std::string &source) {
            new (self)
                GpuModel(std::string(bytes.c_str(), bytes.size()), source);
          },
          nb::arg("data"), nb::arg("source"))
      .def_prop_ro(
          "inputs",
          [](const GpuModel &g) {
            std::vector<TensorInfo> infos;
            for (const runtime::TensorInfo &t : g.inputs())
              infos.push_back({t.name, t.shape, dlcGetDTypeName(t.dtype)});
            return infoList(infos);
          })
      .def_prop_ro(
          "outputs",
          [](const GpuModel &g) {
            std::vector<TensorInfo> infos;
            for (const runtime::TensorInfo &t : g.outputs())
              infos.push_back({t.name, t.shape, dlcGetDTypeName(t.dtype)});
            return infoList(infos);
          })
      .def("run_host",
           [](GpuModel &g, const std::vector<CpuArray> &arrays) {
             std::vector<const void *> in;
             for (const CpuArray &a : arrays)
               in.push_back(a.data());
             std::vector<Tensor> results;
             std::vector<void *> out;
             for (const runtime::TensorInfo &t : g.outputs())
               results.emplace_back(toDType(t.dtype), t.shape);
             for (Tensor &r : results)
               out.push_back(r.raw());
             {
               nb::gil_scoped_release release;
               g.runHost(in, out);
             }
             nb::list list;
             for (Tensor &r : results)
               list.append(numpyOf(std::move(r)));
             return list;
           })
      .def("run_device", [](GpuModel &g, int device,
                            const std::vector<CudaArray> &arrays,
                            uintptr_t stream) {
        std::vector<const void *> in;
        for (size_t i = 0; i < arrays.size(); ++i) {
          if (reinterpret_cast<uintptr_t>(arrays[i].data()) % 256)
            throw UserError("input " + std::to_string(i) +
                            ": the runtime needs GPU buffers aligned to "
                            "256 bytes (a slice of a larger array is not)");
          in.push_back(arrays[i].data());
        }
        nb::list list;
        std::vector<void *> out;
        for (const runtime::TensorInfo &t : g.outputs()) {
          void *p = g.allocate(device, t.bytes);
          nb::capsule owner(p, [](void *q) noexcept { GpuModel::release(q); });
          std::vector<size_t> shape(t.shape.begin(), t.shape.end());
          list.append(nb::ndarray<nb::device::cuda>(
                          p, shape.size(), shape.data(), owner, nullptr,
                          dlpackOf(toDType(t.dtype)), nb::device::cuda::value,
                          device)
                          .cast());
          out.push_back(p);
        }
        {
          nb::gil_scoped_release release;
          g.runDevice(device, in, out, stream);
        }
        return list;
      });

  m.def(
      "compile_file",
      [](const std::string &path, const std::string &weights,
         const std::string &precision, std::optional<int64_t> batch,
         const std::string &arch, const std::string &kernels,
         const std::string &displayName, bool progress,
         const std::map<std::string, std::vector<int64_t>> &inputShapes) {
        Options options;
        options.inputShapes = inputShapes;
        options.progress = progress;
        options.precision = precision;
        options.batch = batch;
        options.arch = arch;
        options.kernels = kernels;
        nb::gil_scoped_release release;
        return Model::compileFile(path, weights, options, displayName);
      },
      nb::arg("path"), nb::arg("weights"), nb::arg("precision"),
      nb::arg("batch").none(), nb::arg("arch"), nb::arg("kernels"),
      nb::arg("display_name"), nb::arg("progress") = false,
      nb::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>());

  m.def(
      "inspect_artifact",
      [](nb::bytes bytes, const std::string &path) {
        ArtifactInfo info;
        try {
          info = inspectArtifact(std::string(bytes.c_str(), bytes.size()));
        } catch (const artifact::FormatError &e) {
          throw UserError(e.what(), path);
        }
        nb::dict d;
        d["inputs"] = infoList(info.inputs);
        d["outputs"] = infoList(info.outputs);
        d["steps"] = stepList(info.steps);
        d["memory"] = memoryDict(info.memory);
        d["precision"] = info.precision;
        return d;
      },
      nb::arg("data"), nb::arg("path"));

  m.def(
      "write_file",
      [](const std::string &path, nb::bytes bytes) {
        writeFileAtomic(path, std::string(bytes.c_str(), bytes.size()));
      },
      nb::arg("path"), nb::arg("data"));
}
