#pragma once
// Runs a model with ONNX Runtime (CPU) through tests/ort/run_ort.js, so that tests can check xexp's
// results and rewrites against the reference runtime. Installed by scripts/install_deps.sh; when it is
// missing, run_onnxruntime throws (tests fail, they never skip silently).
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/json.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "xexp/core/error.hpp"
#include "xexp/core/tensor.hpp"

namespace xexp::testing {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

struct OrtOptions {
  // disabled: ORT runs the graph as written, so a test checks xexp's optimizations, not ORT's.
  std::string optimization_level = "disabled";  // disabled, basic, extended, all
  int threads = 1;                              // intra-op threads; 0 lets ORT choose
};

inline std::string ort_runner_script() { return std::string(XEXP_SOURCE_DIR) + "/tests/ort/run_ort.js"; }

inline std::string ort_command(const std::string& mode_and_args, const OrtOptions& options) {
  return "node " + shell_quote(ort_runner_script()) + " " + mode_and_args + " --level " +
         shell_quote(options.optimization_level) + " --threads " + std::to_string(options.threads);
}

// True when node and onnxruntime-node are installed (checked once).
inline bool ort_available() {
  static const bool available = run_command("node " + shell_quote(ort_runner_script()) + " version").exit_code == 0;
  return available;
}

inline Tensor read_ort_tensor(const Json& entry, const std::filesystem::path& dir) {
  const auto type = static_cast<ElemType>(static_cast<int32_t>(entry["type"].number()));
  std::vector<int64_t> dims;
  for (const Json& d : entry["dims"].array()) dims.push_back(static_cast<int64_t>(d.number()));
  if (type == ElemType::String) {
    std::vector<std::string> values;
    for (const Json& s : entry["strings"].array()) values.push_back(s.str());
    return Tensor::strings(std::move(dims), std::move(values));
  }
  auto storage = std::make_shared<OwnedStorage>(read_file<std::vector<std::byte>>(dir / entry["path"].str()));
  return Tensor(type, std::move(dims), std::move(storage));
}

inline std::string ort_manifest_entry(const std::string& name, const Tensor& t, const std::string& file) {
  std::string dims;
  for (int64_t d : t.dims()) {
    if (!dims.empty()) dims += ',';
    dims += std::to_string(d);
  }
  std::string entry = "{\"name\":" + json_quote(name) + ",\"type\":" + std::to_string(static_cast<int>(t.type())) +
                      ",\"dims\":[" + dims + "],";
  if (t.type() == ElemType::String) {
    std::string values;
    for (const std::string& s : t.string_data()) {
      if (!values.empty()) values += ',';
      values += json_quote(s);
    }
    return entry + "\"strings\":[" + values + "]}";
  }
  return entry + "\"path\":" + json_quote(file) + "}";
}

// The files already holding a tensor's bytes, by the tensor's storage (copies of a Tensor share it): a
// batch writes the feeds its jobs share once: an original and its optimized model read the same tensors,
// up to 2 GB of them in the original project's full-size sweep (which wrote 40 GB of files in all).
using WrittenFeeds = std::map<std::pair<const std::byte*, std::size_t>, std::string>;

// Writes `feeds` into `dir` as run_ort.js reads them: dir/inputs.json and one raw file per tensor, or a
// file of `written` when it holds the tensor already.
inline std::string write_ort_feeds(const std::filesystem::path& dir, const NamedTensors& feeds,
                                   WrittenFeeds& written) {
  std::filesystem::create_directories(dir);
  std::string manifest = "[\n";
  for (std::size_t k = 0; k < feeds.size(); ++k) {
    const auto& [name, tensor] = feeds[k];
    std::string file = "input_" + std::to_string(k) + ".bin";
    if (tensor.type() != ElemType::String) {
      const auto bytes = tensor.bytes();
      const auto [same, first] = written.try_emplace({bytes.data(), bytes.size()}, (dir / file).string());
      if (first)
        write_file(dir / file, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
      else
        file = same->second;
    }
    if (k) manifest += ",\n";
    manifest += ort_manifest_entry(name, tensor, file);
  }
  const auto path = dir / "inputs.json";
  write_file(path, manifest + "\n]\n");
  return path.string();
}

// Same, for one job.
inline std::string write_ort_feeds(const std::filesystem::path& dir, const NamedTensors& feeds) {
  WrittenFeeds written;
  return write_ort_feeds(dir, feeds, written);
}

// The outputs run_ort.js wrote into `out_dir`, in the model's output order.
inline NamedTensors read_ort_outputs(const std::filesystem::path& out_dir) {
  NamedTensors outputs;
  const Json manifest_out = parse_json(read_file(out_dir / "outputs.json"));
  for (const Json& entry : manifest_out.array())
    outputs.emplace_back(entry["name"].str(), read_ort_tensor(entry, out_dir));
  return outputs;
}

// Runs `model_path` on `feeds`; returns the outputs in the model's output order. Throws xexp::Error
// carrying ONNX Runtime's message when anything fails.
inline NamedTensors run_onnxruntime(const std::string& model_path, const NamedTensors& feeds,
                                    const OrtOptions& options = {}) {
  TempDir dir;
  const std::string inputs = write_ort_feeds(dir.path(), feeds);
  const auto out_dir = dir.path() / "outputs";
  const CommandResult result = run_command(ort_command(
      "run " + shell_quote(model_path) + " " + shell_quote(inputs) + " " + shell_quote(out_dir.string()), options));
  if (result.exit_code != 0) {
    std::string message = result.err.empty() ? result.out : result.err;
    while (!message.empty() && message.back() == '\n') message.pop_back();
    throw Error("onnxruntime failed on " + model_path + " (exit code " + std::to_string(result.exit_code) +
                "): " + message);
  }
  return read_ort_outputs(out_dir);
}

struct OrtJob {
  std::string model;
  NamedTensors feeds;
  std::string save_optimized = {};  // where ORT writes the model it optimized (optimizedModelFilePath), if set
  // The index of an earlier job that must run for this one to be worth running (the original of a model
  // whose optimized form follows it): when that one fails, this one is skipped with an error.
  std::optional<std::size_t> after = std::nullopt;
};

struct OrtResult {
  bool ok = false;
  std::string error;     // ONNX Runtime's message when !ok
  NamedTensors outputs;  // when ok
};

// Runs many models in as few node processes as possible (run_ort.js batch): a job that fails gets its
// error and the others go on; a job that brings the whole runtime down is marked failed and a new
// process takes the jobs after it.
inline std::vector<OrtResult> run_onnxruntime_batch(const std::vector<OrtJob>& jobs, const OrtOptions& options = {}) {
  TempDir dir;
  std::vector<OrtResult> results(jobs.size());
  WrittenFeeds written;
  for (std::size_t k = 0; k < jobs.size(); ++k)
    write_ort_feeds(dir.path() / std::to_string(k), jobs[k].feeds, written);
  std::size_t next = 0;
  while (next < jobs.size()) {
    std::string manifest = "[\n";
    for (std::size_t k = next; k < jobs.size(); ++k) {
      const auto job_dir = dir.path() / std::to_string(k);
      if (k > next) manifest += ",\n";
      manifest += "{\"model\":" + json_quote(jobs[k].model) + ",\"inputs\":" + json_quote((job_dir / "inputs.json").string()) +
                  ",\"out\":" + json_quote((job_dir / "outputs").string());
      if (!jobs[k].save_optimized.empty()) manifest += ",\"saveOptimized\":" + json_quote(jobs[k].save_optimized);
      // A job before `next` ran in a process that crashed since: this one runs regardless.
      if (jobs[k].after && *jobs[k].after >= next && *jobs[k].after < k)
        manifest += ",\"after\":" + std::to_string(*jobs[k].after - next);
      manifest += "}";
    }
    write_file(dir.path() / "jobs.json", manifest + "\n]\n");
    const CommandResult r = run_command(ort_command("batch " + shell_quote(dir / "jobs.json"), options));
    std::size_t done = next;
    std::size_t start = 0;
    while (start < r.out.size()) {
      std::size_t end = r.out.find('\n', start);
      if (end == std::string::npos) break;  // a line cut short by a crash
      const std::string_view text = std::string_view(r.out).substr(start, end - start);
      start = end + 1;
      if (!text.starts_with("{\"job\":")) continue;  // anything else the runtime printed
      const Json line = parse_json(text);
      const std::size_t k = next + static_cast<std::size_t>(line["job"].number());
      if (line.has("error")) results[k].error = line["error"].str();
      else results[k] = {true, {}, read_ort_outputs(dir.path() / std::to_string(k) / "outputs")};
      done = k + 1;
    }
    if (done < jobs.size()) {
      std::string message = r.err;
      while (!message.empty() && message.back() == '\n') message.pop_back();
      // The runner itself failed (not installed, bad manifest): no job can run, say so.
      if (r.exit_code == 0 || (done == next && message.starts_with("run_ort: error:")))
        throw Error("run_ort.js batch failed (exit code " + std::to_string(r.exit_code) + "): " + message);
      results[done].error = "onnxruntime crashed (exit code " + std::to_string(r.exit_code) + "): " + message;
      ++done;
    }
    next = done;
  }
  return results;
}

}  // namespace xexp::testing
