//===- KerasReaderTest.cpp - the Keras / TF.js model-file readers -*- C++ -*-//
//
// The model files come from real Keras: test/e2e/gen_malformed.py writes
// valid models of every format (with the weights Keras holds, in valid.json)
// and the malformed corpus (cases.json) once into the build tree, under a
// lock, and again whenever the generator changes. Keras 2 and TF.js files
// need an interpreter with tf_keras and tensorflowjs: set DLC_TF_PYTHON to
// one; without it those models and cases are simply not generated.
// A few parsing tests use small hand-written configs.
//
//===----------------------------------------------------------------------===//

#include "frontends/keras/reader/Isolation.h"
#include "frontends/keras/reader/KerasModel.h"
#include "frontends/keras/reader/ModelConfig.h"
#include "frontends/keras/reader/Weights.h"

#include "support/Error.h"
#include "support/File.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace dlc;
using namespace dlc::keras;
using nlohmann::json;
namespace fs = std::filesystem;

#ifndef DLC_PYTHON
#error "DLC_PYTHON (the project's .venv interpreter) must be defined"
#endif
#ifndef DLC_GEN_MALFORMED
#error "DLC_GEN_MALFORMED (test/e2e/gen_malformed.py) must be defined"
#endif
#ifndef DLC_READER_CORPUS
#error "DLC_READER_CORPUS (the folder to generate into) must be defined"
#endif

namespace {

std::string envOr(const char *name, const std::string &fallback) {
  const char *v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The folder with valid.json and cases.json, generated on first use.
const std::string &corpus() {
  static const std::string dir = [] {
    std::string dir = envOr("DLC_READER_CORPUS", DLC_READER_CORPUS);
    std::string python = envOr("DLC_PYTHON", DLC_PYTHON);
    std::string tfPython = envOr("DLC_TF_PYTHON", "");
    // Regenerate when the generator or the Keras 2 interpreter changes.
    std::string stamp =
        std::to_string(std::hash<std::string>()(slurp(DLC_GEN_MALFORMED))) +
        " " + tfPython;
    fs::create_directories(fs::path(dir).parent_path());
    int lock = ::open((dir + ".lock").c_str(), O_CREAT | O_RDWR, 0644);
    if (lock < 0 || ::flock(lock, LOCK_EX) != 0)
      throw std::runtime_error("cannot lock " + dir + ".lock");
    if (slurp(dir + "/stamp") != stamp) {
      if (!fs::exists(python))
        throw std::runtime_error("no Python at " + python +
                                 " to write the Keras fixtures (run "
                                 "scripts/setup.sh or set DLC_PYTHON)");
      fs::remove_all(dir);
      std::string cmd =
          "'" + python + "' '" DLC_GEN_MALFORMED "' '" + dir + "'" +
          (tfPython.empty() ? "" : " --tf-python '" + tfPython + "'") + " > '" +
          dir + ".log' 2>&1";
      if (std::system(cmd.c_str()) != 0)
        throw std::runtime_error("the fixture generator failed; see " + dir +
                                 ".log");
      std::ofstream(dir + "/stamp") << stamp;
    }
    ::flock(lock, LOCK_UN);
    ::close(lock);
    return dir;
  }();
  return dir;
}

json loadJson(const std::string &path) { return json::parse(slurp(path)); }

/// Runs `fn` with the corpus folder as the working directory, so that the
/// paths given to the reader are the relative ones of cases.json.
template <typename Fn> void inCorpus(Fn fn) {
  fs::path old = fs::current_path();
  fs::current_path(corpus());
  try {
    fn();
  } catch (...) {
    fs::current_path(old);
    throw;
  }
  fs::current_path(old);
}

KerasModel read(const std::string &model, const std::string &weights = "") {
  KerasModel m;
  inCorpus([&] { m = readKerasModel(model, weights); });
  return m;
}

const json *validEntry(const std::string &name) {
  static const json all = loadJson(corpus() + "/valid.json");
  for (const json &e : all)
    if (e["name"] == name)
      return &e;
  return nullptr;
}

#define REQUIRE_VALID(name)                                                    \
  const json *entry = validEntry(name);                                        \
  if (!entry)                                                                  \
    GTEST_SKIP() << name << " was not generated (Keras 2 / TF.js need "        \
                 << "DLC_TF_PYTHON)";

/// Every non-nested layer by its path ("inner/inner_d1").
void layersByPath(const Model &model, const std::string &prefix,
                  std::map<std::string, const Layer *> &out) {
  for (const Layer &layer : model.layers) {
    if (layer.nested)
      layersByPath(*layer.nested, prefix + layer.name + "/", out);
    else
      out[prefix + layer.name] = &layer;
  }
}

const Layer &layerNamed(const Model &model, const std::string &name) {
  for (const Layer &layer : model.layers)
    if (layer.name == name)
      return layer;
  throw std::runtime_error("no layer " + name);
}

std::string refs(const std::vector<TensorRef> &refs) {
  std::string s;
  for (const TensorRef &r : refs)
    s += (s.empty() ? "" : " ") + r.layer + ":" + std::to_string(r.node) + ":" +
         std::to_string(r.tensor);
  return s;
}

std::string callRefs(const Layer &layer) {
  std::string s;
  for (const LayerCall &c : layer.calls)
    s += "[" + refs(c.inputs) + "]";
  return s;
}

std::string formatName(FileFormat f) {
  switch (f) {
  case FileFormat::KerasArchive:
    return "KerasArchive";
  case FileFormat::JsonAndWeights:
    return "JsonAndWeights";
  case FileFormat::LegacyH5:
    return "LegacyH5";
  case FileFormat::TfJsLayers:
    return "TfJsLayers";
  }
  return "?";
}

std::string generationId(Generation g) {
  switch (g) {
  case Generation::Keras3:
    return "Keras3";
  case Generation::Keras2:
    return "Keras2";
  case Generation::TfJs:
    return "TfJs";
  }
  return "?";
}

/// Compares what the reader put on each layer with what Keras held.
void checkAgainstKeras(const json &entry) {
  SCOPED_TRACE(entry["name"].get<std::string>());
  std::string weights =
      entry["weights"].is_string() ? entry["weights"].get<std::string>() : "";
  KerasModel m = read(entry["model"], weights);
  EXPECT_EQ(formatName(m.format), entry["format"]);
  EXPECT_EQ(generationId(m.generation), entry["generation"]);
  EXPECT_EQ(m.path, entry["model"]);
  std::map<std::string, const Layer *> layers;
  layersByPath(*m.model, "", layers);
  double atol = entry["atol"].get<double>();
  for (const auto &[path, expected] : entry["layers"].items()) {
    SCOPED_TRACE(path);
    auto it = layers.find(path);
    ASSERT_NE(it, layers.end()) << "layer missing";
    const Layer &layer = *it->second;
    EXPECT_EQ(layer.className, expected["class"]);
    const json &ws = expected["weights"];
    ASSERT_EQ(layer.weights.size(), ws.size());
    for (size_t i = 0; i < ws.size(); ++i) {
      const Tensor &t = layer.weights[i];
      EXPECT_EQ(dtypeName(t.dtype()), ws[i]["dtype"]) << "weight " << i;
      EXPECT_EQ(t.shape(), ws[i]["shape"].get<std::vector<int64_t>>())
          << "weight " << i;
      const json &values = ws[i]["values"];
      ASSERT_EQ(static_cast<size_t>(t.numel()), values.size());
      int bad = 0;
      for (size_t k = 0; k < values.size() && bad < 3; ++k) {
        double want = values[k].get<double>(), got = t.at(k);
        if (std::fabs(got - want) > atol) {
          ADD_FAILURE() << "weight " << i << " element " << k << ": " << got
                        << " != " << want;
          ++bad;
        }
      }
    }
  }
  // Nothing read that Keras does not have.
  for (const auto &[path, layer] : layers) {
    if (!layer->weights.empty()) {
      EXPECT_TRUE(entry["layers"].contains(path))
          << "unexpected weights on " << path;
    }
  }
}

/// The Functional model that gen_malformed.py builds in every format: two
/// inputs and outputs, a shared layer, a nested Sequential and a nested
/// Functional each called twice. Keras 3 and Keras 2 number the calls of
/// the nested models differently; the reader must undo both.
void checkFuncTopology(const KerasModel &m) {
  const Model &model = *m.model;
  EXPECT_EQ(model.name, "func");
  std::vector<std::string> names;
  for (const Layer &l : model.layers)
    names.push_back(l.name);
  // Keras writes the layers in the order its graph walk visits them.
  EXPECT_EQ(names, (std::vector<std::string>{"a", "shared", "inner", "b",
                                             "innerf", "add", "cat", "o1"}));
  EXPECT_EQ(refs(model.inputs), "a:0:0 b:0:0");
  EXPECT_EQ(refs(model.outputs), "o1:0:0 innerf:0:0");
  EXPECT_TRUE(layerNamed(model, "a").calls.empty());
  EXPECT_EQ(callRefs(layerNamed(model, "shared")), "[a:0:0][b:0:0]");
  EXPECT_EQ(callRefs(layerNamed(model, "inner")), "[shared:0:0][shared:1:0]");
  EXPECT_EQ(callRefs(layerNamed(model, "innerf")), "[inner:0:0][innerf:0:0]");
  EXPECT_EQ(callRefs(layerNamed(model, "add")),
            "[inner:0:0 inner:1:0 innerf:1:0]");
  EXPECT_EQ(callRefs(layerNamed(model, "cat")), "[add:0:0 shared:0:0]");
  EXPECT_EQ(callRefs(layerNamed(model, "o1")), "[cat:0:0]");
  for (const Layer &l : model.layers)
    for (const LayerCall &c : l.calls)
      EXPECT_FALSE(c.kwargs.contains("mask")) << l.name;

  const Layer &inner = layerNamed(model, "inner");
  ASSERT_TRUE(inner.nested);
  EXPECT_EQ(inner.nested->className, "Sequential");
  ASSERT_GE(inner.nested->layers.size(), 3u);
  EXPECT_EQ(inner.nested->layers[0].className, "InputLayer");
  EXPECT_EQ(inner.nested->layers[1].name, "inner_d1");
  EXPECT_EQ(callRefs(inner.nested->layers[1]),
            "[" + inner.nested->layers[0].name + ":0:0]");
  EXPECT_EQ(refs(inner.nested->outputs),
            inner.nested->layers.back().name + ":0:0");
  const Layer &innerf = layerNamed(model, "innerf");
  ASSERT_TRUE(innerf.nested);
  EXPECT_EQ(refs(innerf.nested->inputs), "ii:0:0");
  EXPECT_EQ(refs(innerf.nested->outputs), "innerf_d:0:0");
  EXPECT_EQ(callRefs(layerNamed(*innerf.nested, "innerf_d")), "[ii:0:0]");
}

/// Writes `text` to a fresh temporary folder; returns the file's path.
std::string writeTemp(const std::string &name, const std::string &text) {
  std::string dir = ::testing::TempDir() + "dlc-reader-XXXXXX";
  if (!::mkdtemp(dir.data()))
    throw std::runtime_error("mkdtemp failed");
  std::ofstream(dir + "/" + name, std::ios::binary) << text;
  return dir + "/" + name;
}

std::string errorOf(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const UserError &e) {
    return e.format();
  }
  return "(no error)";
}

//===----------------------------------------------------------------------===//
// Valid models written by Keras
//===----------------------------------------------------------------------===//

TEST(KerasReader, EveryValidModelMatchesKerasWeights) {
  json all = loadJson(corpus() + "/valid.json");
  ASSERT_GE(all.size(), 15u);
  for (const json &entry : all)
    checkAgainstKeras(entry);
}

TEST(KerasReader, Keras3FunctionalTopologyInEveryFormat) {
  for (const char *name : {"k3_func_keras", "k3_func_json", "k3_func_legacy"}) {
    SCOPED_TRACE(name);
    REQUIRE_VALID(name);
    KerasModel m = read((*entry)["model"]);
    EXPECT_EQ(m.generation, Generation::Keras3);
    checkFuncTopology(m);
  }
}

TEST(KerasReader, Keras2FunctionalTopology) {
  for (const char *name : {"k2_func_legacy", "k2_func_json", "k2_func_keras"}) {
    SCOPED_TRACE(name);
    REQUIRE_VALID(name);
    KerasModel m = read((*entry)["model"]);
    EXPECT_EQ(m.generation, Generation::Keras2);
    EXPECT_EQ(m.kerasVersion.substr(0, 2), "2.");
    checkFuncTopology(m);
  }
}

TEST(KerasReader, TfJsFunctionalTopology) {
  for (const char *name : {"tfjs_func", "tfjs_shards"}) {
    SCOPED_TRACE(name);
    REQUIRE_VALID(name);
    KerasModel m = read((*entry)["model"]);
    EXPECT_EQ(m.generation, Generation::TfJs);
    checkFuncTopology(m);
  }
}

TEST(KerasReader, SequentialIsGivenInFunctionalForm) {
  REQUIRE_VALID("k3_seq_keras");
  KerasModel m = read((*entry)["model"]);
  const Model &model = *m.model;
  EXPECT_EQ(model.className, "Sequential");
  EXPECT_EQ(model.name, "seq");
  EXPECT_EQ(m.kerasVersion.substr(0, 2), "3.");
  ASSERT_EQ(model.layers.size(), 4u);
  EXPECT_EQ(model.layers[0].className, "InputLayer");
  EXPECT_TRUE(model.layers[0].calls.empty());
  EXPECT_EQ(refs(model.inputs), model.layers[0].name + ":0:0");
  EXPECT_EQ(callRefs(model.layers[1]), "[" + model.layers[0].name + ":0:0]");
  EXPECT_EQ(callRefs(model.layers[2]), "[dense:0:0]");
  EXPECT_EQ(callRefs(model.layers[3]), "[batch_normalization:0:0]");
  EXPECT_EQ(refs(model.outputs), "dense_1:0:0");
  EXPECT_EQ(model.layers[1].module, "keras.layers");
  EXPECT_EQ(model.layers[1].config["units"], 3);
}

TEST(KerasReader, ChunkedLayerNames) {
  REQUIRE_VALID("k3_chunked");
  KerasModel m = read((*entry)["model"]);
  EXPECT_EQ(m.model->layers.size(), 302u);
  EXPECT_EQ(m.model->layers.back().weights.size(), 2u);
}

TEST(KerasReader, OperationsAreKeptButHaveNoWeights) {
  REQUIRE_VALID("k3_ops_keras");
  KerasModel m = read((*entry)["model"]);
  const Layer *op = nullptr;
  for (const Layer &l : m.model->layers)
    if (isKerasOperation(l))
      op = &l;
  ASSERT_TRUE(op);
  EXPECT_EQ(op->module, "keras.src.ops.numpy");
  EXPECT_EQ(refs(op->calls.at(0).inputs), "d1:0:0 d2:0:0");
  EXPECT_EQ(layerNamed(*m.model, "d3").weights.size(), 2u);
}

TEST(KerasReader, RecurrentWrappersKeepKerasOrder) {
  REQUIRE_VALID("k3_rnn_keras");
  KerasModel m = read((*entry)["model"]);
  const Layer &bi = layerNamed(*m.model, "bi");
  ASSERT_EQ(bi.weights.size(), 6u);
  // forward kernel, recurrent kernel, bias, then the backward ones.
  EXPECT_EQ(bi.weights[0].shape(), (std::vector<int64_t>{3, 16}));
  EXPECT_EQ(bi.weights[1].shape(), (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(bi.weights[2].shape(), (std::vector<int64_t>{16}));
  EXPECT_EQ(bi.weights[3].shape(), (std::vector<int64_t>{3, 16}));
  EXPECT_EQ(layerNamed(*m.model, "gru").weights.at(2).shape(),
            (std::vector<int64_t>{2, 9}));
}

TEST(KerasReader, TfJsQuantizedWeights) {
  {
    REQUIRE_VALID("tfjs_seq_uint8");
    KerasModel m = read((*entry)["model"]);
    EXPECT_EQ(layerNamed(*m.model, "dense").weights.at(0).dtype(), DType::F32);
  }
  {
    REQUIRE_VALID("tfjs_seq_f16");
    KerasModel m = read((*entry)["model"]);
    EXPECT_EQ(layerNamed(*m.model, "dense").weights.at(0).dtype(), DType::F16);
  }
}

TEST(KerasReader, TfJsShardSymlinkInsideTheFolderIsFine) {
  REQUIRE_VALID("tfjs_func");
  fs::path src = fs::path(corpus()) / "valid/tfjs_func";
  std::string dir = ::testing::TempDir() + "dlc-reader-XXXXXX";
  ASSERT_TRUE(::mkdtemp(dir.data()));
  fs::copy_file(src / "model.json", fs::path(dir) / "model.json");
  fs::copy_file(src / "group1-shard1of1.bin", fs::path(dir) / "real.bin");
  fs::create_symlink("real.bin", fs::path(dir) / "group1-shard1of1.bin");
  KerasModel m = readKerasModel(dir + "/model.json");
  EXPECT_EQ(layerNamed(*m.model, "o1").weights.size(), 2u);
}

//===----------------------------------------------------------------------===//
// The malformed corpus
//===----------------------------------------------------------------------===//

TEST(KerasReader, MalformedCorpus) {
  json cases = loadJson(corpus() + "/cases.json")["cases"];
  EXPECT_GE(cases.size(), 40u);
  int reader = 0, importer = 0;
  for (const json &c : cases) {
    std::string name = c["name"];
    SCOPED_TRACE(name);
    std::string weights =
        c["weights"].is_string() ? c["weights"].get<std::string>() : "";
    if (c["stage"] == "reader") {
      ++reader;
      std::string line = errorOf([&] { read(c["model"], weights); });
      EXPECT_TRUE(
          std::regex_search(line, std::regex(c["error"].get<std::string>())))
          << "got:      " << line
          << "\nexpected: " << c["error"].get<std::string>();
      EXPECT_EQ(line.find('\n'), std::string::npos);
      continue;
    }
    // The importer refuses these; the reader must read them and keep what
    // the importer needs to say why.
    ++importer;
    KerasModel m;
    std::string line = errorOf([&] { m = read(c["model"], weights); });
    ASSERT_EQ(line, "(no error)");
    std::map<std::string, const Layer *> layers;
    layersByPath(*m.model, "", layers);
    for (const json &want : c["layers"]) {
      auto it = layers.find(want["name"]);
      ASSERT_NE(it, layers.end()) << want["name"];
      EXPECT_EQ(it->second->className, want["class"]);
    }
  }
  EXPECT_GE(reader, 40);
  EXPECT_GE(importer, 5);
}

TEST(KerasReader, CustomObjectKeepsItsModule) {
  KerasModel m = read("malformed/k3/custom.keras");
  const Layer &scale = layerNamed(*m.model, "scale");
  EXPECT_EQ(scale.module, "dlc_custom_layers");
  EXPECT_EQ(scale.registeredName, "Scale");
  const Layer &dense = layerNamed(*m.model, "out");
  EXPECT_EQ(dense.module, "keras.layers");
  EXPECT_EQ(dense.registeredName, "");
}

TEST(KerasReader, MissingFileNamesIt) {
  EXPECT_EQ(errorOf([] { readKerasModel("/nonexistent/model.keras"); }),
            "dlc: error: /nonexistent/model.keras: No such file or directory");
}

//===----------------------------------------------------------------------===//
// The isolated reader's limits
//===----------------------------------------------------------------------===//

TEST(KerasIsolation, WallClockLimitKillsAReaderThatNeverEnds) {
  IsolationLimits limits;
  limits.seconds = 1;
  limits.timeSource = "test";
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(errorOf([&] {
              runIsolated(
                  []() -> KerasModel {
                    for (;;)
                      ::pause();
                  },
                  limits);
            }),
            "dlc: error: reading the model took longer than 1 s, the time "
            "limit (test)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// What the child said it was reading (ReadingScope) names the file in the
// message of a crash or a limit; outside the scope, the model is named.
TEST(KerasIsolation, MessagesNameWhatTheChildWasReading) {
  EXPECT_EQ(errorOf([] {
              runIsolated([]() -> KerasModel {
                ReadingScope reading("weights file 'w.h5'");
                std::raise(SIGSEGV);
                return KerasModel();
              });
            }),
            "dlc: error: weights file 'w.h5' is corrupt: the reader crashed "
            "on it (signal 11, Segmentation fault)");
  EXPECT_EQ(errorOf([] {
              runIsolated([]() -> KerasModel {
                { ReadingScope reading("weights file 'w.h5'"); }
                std::raise(SIGSEGV);
                return KerasModel();
              });
            }),
            "dlc: error: the file is corrupt: the reader crashed on it "
            "(signal 11, Segmentation fault)");
  IsolationLimits limits;
  limits.seconds = 1;
  limits.timeSource = "test";
  EXPECT_EQ(errorOf([&] {
              runIsolated(
                  []() -> KerasModel {
                    ReadingScope reading("weights file 'w.h5'");
                    for (;;)
                      ::pause();
                  },
                  limits);
            }),
            "dlc: error: reading weights file 'w.h5' took longer than 1 s, "
            "the time limit (test)");
  // In the parent, a scope does nothing.
  { ReadingScope reading("weights file 'w.h5'"); }
}

TEST(KerasIsolation, MemoryLimitStopsARunawayReader) {
  IsolationLimits limits;
  limits.memoryBytes = uint64_t(64) << 20;
  limits.memorySource = "test";
  limits.seconds = 60;
  // Touches 1 GiB, 1 MiB at a time: RLIMIT_AS refuses it (bad_alloc) or,
  // under AddressSanitizer, the parent's polling of the resident memory
  // kills it; both name the limit.
  std::string error = errorOf([&] {
    runIsolated(
        []() -> KerasModel {
          std::vector<std::unique_ptr<char[]>> blocks;
          for (int i = 0; i < 1024; ++i) {
            blocks.emplace_back(new char[1 << 20]);
            std::memset(blocks.back().get(), 1, 1 << 20);
          }
          return KerasModel();
        },
        limits);
  });
  EXPECT_EQ(error, "dlc: error: reading the model needed more than 64 MiB of "
                   "memory, the limit (test)");
}

/// Sets the reader program for its lifetime (readKerasModel then spawns it
/// instead of forking), and restores the fork.
struct ProgramScope {
  explicit ProgramScope(const std::string &program) {
    setReaderProgram(program);
  }
  ~ProgramScope() { setReaderProgram(""); }
};

// The reader program (runIsolatedProgram, the Python module's way) reads
// every valid model of the corpus as Keras wrote it, and refuses every
// malformed file with the line the fork gives.
TEST(KerasIsolation, ProgramReadsTheCorpusAsTheForkDoes) {
  json cases = loadJson(corpus() + "/cases.json")["cases"];
  std::vector<std::string> forked;
  for (const json &c : cases)
    forked.push_back(errorOf([&] {
      read(c["model"],
           c["weights"].is_string() ? c["weights"].get<std::string>() : "");
    }));
  ProgramScope program(DLC_READ_MODEL);
  for (const json &entry : loadJson(corpus() + "/valid.json"))
    checkAgainstKeras(entry);
  for (size_t i = 0; i < cases.size(); ++i) {
    const json &c = cases[i];
    SCOPED_TRACE(c["name"].get<std::string>());
    EXPECT_EQ(errorOf([&] {
                read(c["model"], c["weights"].is_string()
                                     ? c["weights"].get<std::string>()
                                     : "");
              }),
              forked[i]);
  }
}

// A crash, a hang and a runaway allocation of libhdf5 in the reader program
// (fuzz regressions): the same one-line messages as the fork's, naming the
// weights file where the program was reading it (its note, shared through a
// memfd).
TEST(KerasIsolation, ProgramCrashesAndLimits) {
  ProgramScope program(DLC_READ_MODEL);
  const std::string reg = DLC_CLI_REGRESSIONS;
  std::string crashModel = reg + "/weights-libhdf5-global-heap-1/model.json";
  std::string crashWeights = reg + "/weights-libhdf5-global-heap-1/model.h5";
  EXPECT_EQ(errorOf([&] { readKerasModel(crashModel, crashWeights); }),
            "dlc: error: " + crashModel + ": weights file '" + crashWeights +
                "' is corrupt: the reader crashed on it (signal 11, "
                "Segmentation fault)");
  ::setenv("DLC_READ_TIMEOUT", "1", 1);
  std::string hang = reg + "/h5-hang-1/k2_seq.h5";
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(errorOf([&] { readKerasModel(hang); }),
            "dlc: error: " + hang +
                ": reading the model took longer than 1 s, the time limit "
                "(DLC_READ_TIMEOUT)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ::unsetenv("DLC_READ_TIMEOUT");
  ::setenv("DLC_READ_MEMORY", "64M", 1);
  std::string alloc = reg + "/weights-alloc-1/model.json";
  EXPECT_EQ(errorOf([&] {
              readKerasModel(alloc, reg + "/weights-alloc-1/model.h5");
            }),
            "dlc: error: " + alloc +
                ": reading the model needed more than 64 MiB of memory, the "
                "limit (DLC_READ_MEMORY): weights file '" +
                reg +
                "/weights-alloc-1/model.h5': cannot read attribute "
                "'layer_names' of '/' (HDF5: memory allocation failed for "
                "chunk)");
  ::unsetenv("DLC_READ_MEMORY");
}

// A missing program is one line; the program run by hand refuses to start.
TEST(KerasIsolation, ProgramMissingOrRunByHand) {
  {
    ProgramScope program("/nonexistent/dlc-read-model");
    EXPECT_EQ(errorOf([] {
                readKerasModel(DLC_CLI_REGRESSIONS "/h5-hang-1/k2_seq.h5");
              }),
              "dlc: error: " DLC_CLI_REGRESSIONS
              "/h5-hang-1/k2_seq.h5: cannot start the model reader program "
              "'/nonexistent/dlc-read-model': No such file or directory");
  }
  int status = std::system("'" DLC_READ_MODEL "' model.keras 2>/dev/null");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 64);
}

TEST(KerasIsolation, LimitsScaleWithTheInputAndComeFromTheEnvironment) {
  ::unsetenv("DLC_READ_TIMEOUT");
  ::unsetenv("DLC_READ_MEMORY");
  IsolationLimits small = readerLimits(1000);
  EXPECT_EQ(small.seconds, kDefaultSeconds);
  EXPECT_EQ(small.memoryBytes, kDefaultMemory + 4000);
  EXPECT_EQ(small.timeSource, "the default for an input of 1000 bytes; "
                              "DLC_READ_TIMEOUT sets another");
  IsolationLimits big = readerLimits(uint64_t(800) << 20);
  EXPECT_EQ(big.seconds, kDefaultSeconds + 100);
  EXPECT_EQ(big.memoryBytes, kDefaultMemory + (uint64_t(3200) << 20));
  EXPECT_EQ(formatBytes(uint64_t(3) << 29), "1.5 GiB");
  EXPECT_EQ(formatBytes(18 * 1024 + 100), "18 KiB");
  ::setenv("DLC_READ_TIMEOUT", "3", 1);
  ::setenv("DLC_READ_MEMORY", "2G", 1);
  IsolationLimits set = readerLimits(uint64_t(800) << 20);
  EXPECT_EQ(set.seconds, 3u);
  EXPECT_EQ(set.memoryBytes, uint64_t(2) << 30);
  EXPECT_EQ(set.memorySource, "DLC_READ_MEMORY");
  ::setenv("DLC_READ_MEMORY", "lots", 1);
  EXPECT_EQ(errorOf([] { readerLimits(1); }),
            "dlc: error: DLC_READ_MEMORY='lots' is not a memory size of at "
            "least 64 MiB (a positive number of bytes, optionally with a K, "
            "M, G or T suffix)");
  // The syntax of parseMemorySize (SupportTest), as DLC_MAX_MEMORY's.
  ::setenv("DLC_READ_MEMORY", "128MiB", 1);
  EXPECT_EQ(readerLimits(1).memoryBytes, uint64_t(128) << 20);
  ::setenv("DLC_READ_MEMORY", "1T", 1);
  EXPECT_EQ(readerLimits(1).memoryBytes, uint64_t(1) << 40);
  for (const char *bad : {"", "1.5G", "1KB", "-64M", "18446744073709551616"}) {
    ::setenv("DLC_READ_MEMORY", bad, 1);
    if (*bad)
      EXPECT_EQ(errorOf([] { readerLimits(1); }),
                std::string("dlc: error: DLC_READ_MEMORY='") + bad +
                    "' is not a memory size of at least 64 MiB (a positive "
                    "number of bytes, optionally with a K, M, G or T suffix)");
    else // unset and empty are the same: the default
      EXPECT_EQ(readerLimits(1).memorySource.rfind("the default", 0), 0u);
  }
  ::unsetenv("DLC_READ_TIMEOUT");
  ::unsetenv("DLC_READ_MEMORY");
}

//===----------------------------------------------------------------------===//
// Hand-written configs: parsing alone
//===----------------------------------------------------------------------===//

TEST(KerasConfig, SnakeCaseMatchesKeras) {
  // Values from keras.src.utils.naming.to_snake_case.
  const std::pair<const char *, const char *> cases[] = {
      {"Conv2D", "conv2d"},
      {"ReLU", "re_lu"},
      {"DepthwiseConv2D", "depthwise_conv2d"},
      {"Conv2DTranspose", "conv2d_transpose"},
      {"BatchNormalization", "batch_normalization"},
      {"LSTM", "lstm"},
      {"PReLU", "p_re_lu"},
      {"SimpleRNN", "simple_rnn"},
      {"UpSampling2D", "up_sampling2d"},
      {"GlobalAveragePooling2D", "global_average_pooling2d"},
      {"MultiHeadAttention", "multi_head_attention"},
      {"StackedRNNCells", "stacked_rnn_cells"},
      {"ConvLSTM2D", "conv_lstm2d"},
      {"ELU", "elu"},
      {"HTTPServer2Thing", "http_server2_thing"},
  };
  for (const auto &[cls, snake] : cases)
    EXPECT_EQ(snakeCase(cls), snake) << cls;
}

TEST(KerasConfig, PythonJsonTokensAndLimits) {
  json j = parseJson("\xEF\xBB\xBF{\"a\": NaN, \"b\": [Infinity, -Infinity], "
                     "\"c\": \"NaN Infinity\"}",
                     "x");
  EXPECT_TRUE(j["a"].is_null());
  EXPECT_GT(j["b"][0].get<double>(), 1e308);
  EXPECT_LT(j["b"][1].get<double>(), -1e308);
  EXPECT_EQ(j["c"], "NaN Infinity");
  std::string deep = std::string(600, '[') + std::string(600, ']');
  EXPECT_EQ(errorOf([&] { parseJson(deep, "x"); }),
            "dlc: error: x nests deeper than 512 levels");
  EXPECT_NE(errorOf([] {
              parseJson("{\"a\": [1, 2}", "x");
            }).find("dlc: error: x is not valid JSON: parse error"),
            std::string::npos);
}

// A TF.js model saved by tfjs-layers (topology is the model entry itself),
// a Sequential without an InputLayer, and no weights at all.
TEST(KerasConfig, TfJsLayersSequentialWithoutInputLayer) {
  std::string path = writeTemp("model.json", R"({
    "format": "layers-model", "generatedBy": "TensorFlow.js tfjs-layers",
    "modelTopology": {"class_name": "Sequential", "keras_version": "tfjs-layers 4.22.0",
      "backend": "tensor_flow.js", "config": {"name": "s", "layers": [
        {"class_name": "Flatten", "config": {"name": "flat", "batch_input_shape": [null, 2, 3], "dtype": "float32"}},
        {"class_name": "Activation", "config": {"name": "act", "activation": "relu"}}]}},
    "weightsManifest": []})");
  KerasModel m = readKerasModel(path);
  EXPECT_EQ(m.generation, Generation::TfJs);
  EXPECT_EQ(m.format, FileFormat::TfJsLayers);
  EXPECT_EQ(m.kerasVersion, "tfjs-layers 4.22.0");
  const Model &model = *m.model;
  ASSERT_EQ(model.layers.size(), 3u);
  EXPECT_EQ(model.layers[0].className, "InputLayer");
  EXPECT_EQ(model.layers[0].name, "flat_input");
  EXPECT_EQ(model.layers[0].config["batch_input_shape"],
            json::parse("[null, 2, 3]"));
  EXPECT_EQ(callRefs(model.layers[1]), "[flat_input:0:0]");
  EXPECT_EQ(callRefs(model.layers[2]), "[flat:0:0]");
  EXPECT_EQ(refs(model.outputs), "act:0:0");
}

/// A Functional model `m` that calls a nested model `inner` (of class
/// `nestedClass`) twice, the second time on its own first output, then a
/// ReLU on inner's second output; outputs: inner's second output and the
/// ReLU. The node indices are written as the file would (`first` for
/// inner's first call inside inbound nodes, `output` in output_layers),
/// with Keras 3 ({args, kwargs}) or Keras 2 ([[layer, node, tensor, {}]])
/// nodes.
json functionalEntry(const std::string &nestedClass, int first, int output,
                     bool keras3) {
  auto node = [&](const std::string &layer, int index) {
    std::string i = std::to_string(index);
    if (!keras3)
      return "[[\"" + layer + "\", " + i + ", 0, {}]]";
    return R"({"args": [{"class_name": "__keras_tensor__", "config": {"shape": [null, 2], "keras_history": [")" +
           layer + "\", " + i +
           R"(, 0]}}], "kwargs": {"mask": null, "training": false}})";
  };
  std::string text = R"({"class_name": "Functional", "config": {"name": "m",
    "layers": [
      {"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 2]}, "inbound_nodes": []},
      {"class_name": ")" +
                     nestedClass +
                     R"(", "name": "inner", "config": {"name": "inner",
        "layers": [
          {"class_name": "InputLayer", "name": "ii", "config": {"name": "ii", "batch_input_shape": [null, 2]}, "inbound_nodes": []},
          {"class_name": "ReLU", "name": "r", "config": {"name": "r"}, "inbound_nodes": [[["ii", 0, 0, {}]]]}],
        "input_layers": [["ii", 0, 0]], "output_layers": [["r", 0, 0]]},
       "inbound_nodes": [)" +
                     node("x", 0) + ", " + node("inner", first) + R"(]},
      {"class_name": "ReLU", "name": "after", "config": {"name": "after"}, "inbound_nodes": [)" +
                     node("inner", first + 1) + R"(]}],
    "input_layers": )" +
                     (keras3 ? R"(["x", 0, 0])" : R"([["x", 0, 0]])") + R"(,
    "output_layers": [["inner", )" +
                     std::to_string(output) + R"(, 0], ["after", 0, 0]]}})";
  return json::parse(text);
}

// Keras 2 counts a nested model's own first node everywhere; Keras 3 counts
// it only in input_layers / output_layers, and only for Functional.
TEST(KerasConfig, NestedModelNodeNumbering) {
  auto calls = [](const Model &m) {
    return callRefs(m.layers[1]) + "|" + callRefs(m.layers[2]) + "|" +
           refs(m.outputs);
  };
  std::shared_ptr<Model> k2 = readModelConfig(
      functionalEntry("Functional", 1, 2, false), Generation::Keras2);
  EXPECT_EQ(calls(*k2), "[x:0:0][inner:0:0]|[inner:1:0]|inner:1:0 after:0:0");
  std::shared_ptr<Model> k3 = readModelConfig(
      functionalEntry("Functional", 0, 2, true), Generation::Keras3);
  EXPECT_EQ(calls(*k3), "[x:0:0][inner:0:0]|[inner:1:0]|inner:1:0 after:0:0");
  EXPECT_EQ(k3->layers[1].calls[0].kwargs, json({{"training", false}}));
  std::shared_ptr<Model> k3seq = readModelConfig(
      functionalEntry("Sequential", 0, 1, true), Generation::Keras3);
  EXPECT_EQ(calls(*k3seq),
            "[x:0:0][inner:0:0]|[inner:1:0]|inner:1:0 after:0:0");
  // Keras 2 numbering read as Keras 3 runs past the calls.
  EXPECT_EQ(errorOf([] {
              readModelConfig(functionalEntry("Functional", 1, 2, false),
                              Generation::Keras3);
            }),
            "dlc: error: layer 'after' (ReLU): inbound node 0 refers to node "
            "2 of layer 'inner', which has 2 calls");
}

TEST(KerasConfig, KwargTensorsResolveAndCycleIsRefused) {
  json entry = functionalEntry("Functional", 0, 2, true);
  // A tensor among the keyword arguments is resolved like an input.
  entry["config"]["layers"][2]["inbound_nodes"][0]["kwargs"]["initial_state"] =
      entry["config"]["layers"][1]["inbound_nodes"][0]["args"][0];
  std::shared_ptr<Model> m = readModelConfig(entry, Generation::Keras3);
  EXPECT_EQ(m->layers[2].calls[0].kwargs["initial_state"],
            json::parse(
                R"({"keras_tensor": {"layer": "x", "node": 0, "tensor": 0}})"));
  // The nested model's first call fed from its own second call.
  json cyclic = functionalEntry("Functional", 0, 2, true);
  cyclic["config"]["layers"][1]["inbound_nodes"][0] =
      cyclic["config"]["layers"][1]["inbound_nodes"][1];
  EXPECT_EQ(errorOf([&] { readModelConfig(cyclic, Generation::Keras3); }),
            "dlc: error: layer 'inner' (Functional): the layer graph of model "
            "'m' has a cycle through layer 'inner'");
}

// A keras.ops call with a constant (`3.0 - x`) keeps its positional
// arguments in order, the tensor marked by its index among the inputs; a
// layer given a constant is refused.
TEST(KerasConfig, OperationKeepsConstantArguments) {
  std::string text = R"({"class_name": "Functional", "config": {"name": "m",
    "layers": [
      {"module": "keras.layers", "class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_shape": [null, 2]}, "inbound_nodes": []},
      {"module": "keras.src.ops.numpy", "class_name": "Subtract", "registered_name": "Subtract", "name": "sub", "config": {"name": "sub"},
       "inbound_nodes": [{"args": [3.0, {"class_name": "__keras_tensor__", "config": {"shape": [null, 2], "keras_history": ["x", 0, 0]}}], "kwargs": {}}]}],
    "input_layers": ["x", 0, 0], "output_layers": ["sub", 0, 0]}})";
  std::shared_ptr<Model> m =
      readModelConfig(json::parse(text), Generation::Keras3);
  const LayerCall &call = m->layers[1].calls.at(0);
  EXPECT_EQ(refs(call.inputs), "x:0:0");
  EXPECT_EQ(call.args, json::parse(R"([3.0, {"input": 0}])"));
  EXPECT_TRUE(m->layers[0].calls.empty());
  json layer = json::parse(text);
  layer["config"]["layers"][1]["module"] = "keras.layers";
  EXPECT_EQ(errorOf([&] { readModelConfig(layer, Generation::Keras3); }),
            "dlc: error: layer 'sub' (Subtract): inbound node 0 passes a "
            "constant (non-tensor) positional argument, which is not "
            "supported");
}

} // namespace
