#include "sim/explore/shrink.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "sim/kernel/trace.h"
#include "sim/runner/runner.h"
#include "sim/scenario/loader.h"

namespace ksim::sim {
namespace {

using Json = nlohmann::ordered_json;

std::string Seconds(int64_t ms) {
  const std::string rest = std::to_string(ms % 1000);
  return std::to_string(ms / 1000) + "." + std::string(3 - rest.size(), '0') + rest + " s";
}

class Shrinker {
 public:
  Shrinker(std::string file, const ShrinkOptions& options, const ShrinkLog& log)
      : file_(std::move(file)), options_(options), log_(log) {}

  // The failures of `candidate` (nullopt: it does not load or run).
  std::optional<std::vector<PropertyFailure>> Failures(const Json& candidate,
                                                       RunResult* run_out = nullptr) {
    ++runs_;
    if (options_.run_apart) {
      // Apart first: a candidate that kills ksim must not end the shrink. Only a run that
      // completed there is made again here for the result (`run_out`).
      std::optional<std::vector<PropertyFailure>> apart =
          options_.run_apart(candidate.dump(2), &last_error_);
      if (!apart || run_out == nullptr || Crashes(*apart)) return apart;
    }
    Result<Scenario> parsed = ParseScenario(candidate.dump(2), file_);
    if (!parsed.ok()) {
      last_error_ = parsed.status().message();
      return std::nullopt;
    }
    Result<RunResult> run = RunScenario(*parsed, RunOptions{});
    if (!run.ok()) {
      last_error_ = run.status().message();
      return std::nullopt;
    }
    const Promise promise = DerivePromise(*parsed, options_.properties);
    std::vector<PropertyFailure> failures = CheckProperties(promise, *parsed, *run);
    if (run_out != nullptr) *run_out = std::move(run).value();
    return failures;
  }

  static bool Crashes(const std::vector<PropertyFailure>& failures) {
    return std::any_of(failures.begin(), failures.end(),
                       [](const PropertyFailure& f) { return f.property == "no_crash"; });
  }

  bool FailsTheSame(const Json& candidate, RunResult* run = nullptr) {
    std::optional<std::vector<PropertyFailure>> failures = Failures(candidate, run);
    if (!failures) return false;
    for (const PropertyFailure& f : *failures) {
      if (f.signature == target_.signature) {
        last_failure_ = f;
        return true;
      }
    }
    return false;
  }

  bool Budget() const { return runs_ < options_.max_runs; }

  // Keeps `candidate` when it fails the same; reports the step either way.
  bool Try(const Json& candidate, const std::string& what) {
    if (!Budget()) return false;
    const bool kept = FailsTheSame(candidate);
    ++step_;
    if (kept) {
      current_ = candidate;
      ++kept_;
    }
    log_("step " + std::to_string(step_) + ": " + what + ": " +
         (kept ? "kept (still " + target_.property + ")" : "no") + " [" +
         std::to_string(Actions(current_).size()) + " actions, " +
         std::to_string(current_.value("duration_ms", int64_t{60000})) + " ms, run " +
         std::to_string(runs_) + "]");
    return kept;
  }

  static Json Actions(const Json& document) {
    return document.contains("actions") && document["actions"].is_array() ? document["actions"]
                                                                          : Json::array();
  }
  // The current actions, one element each (Actions returns a copy: iterate one copy only).
  std::vector<Json> ActionList() const {
    const Json all = Actions(current_);
    return std::vector<Json>(all.begin(), all.end());
  }
  Json WithActions(const std::vector<Json>& actions) const {
    Json candidate = current_;
    candidate["actions"] = Json::array();
    for (const Json& a : actions) candidate["actions"].push_back(a);
    return candidate;
  }

  // ddmin over the actions: remove chunks while the failure stays.
  bool ShrinkActions() {
    bool changed = false;
    std::vector<Json> actions = ActionList();
    size_t n = 2;
    while (!actions.empty() && Budget()) {
      const size_t chunk = std::max<size_t>(1, actions.size() / n);
      bool removed = false;
      for (size_t start = 0; start < actions.size() && Budget(); start += chunk) {
        const size_t end = std::min(actions.size(), start + chunk);
        std::vector<Json> rest(actions.begin(), actions.begin() + static_cast<ptrdiff_t>(start));
        rest.insert(rest.end(), actions.begin() + static_cast<ptrdiff_t>(end), actions.end());
        const std::string what =
            end - start == 1
                ? "drop action " + std::to_string(start) + " (" +
                      actions[start].value("do", std::string()) + ")"
                : "drop actions " + std::to_string(start) + ".." + std::to_string(end - 1);
        if (Try(WithActions(rest), what)) {
          actions = std::move(rest);
          n = std::max<size_t>(n - 1, 2);
          removed = changed = true;
          break;
        }
      }
      if (removed) continue;
      if (chunk == 1) break;
      n = std::min(actions.size(), n * 2);
    }
    return changed;
  }

  bool ShrinkTime() {
    bool changed = false;
    std::vector<Json> actions = ActionList();
    int64_t last = 0;
    for (const Json& a : actions) last = std::max(last, a.value("at_ms", int64_t{0}));
    // The duration: the smallest that still fails, by bisection down to the last action.
    int64_t low = std::max<int64_t>(last, 1000);
    int64_t high = current_.value("duration_ms", int64_t{60000});
    while (low < high && Budget()) {
      const int64_t mid = low + (high - low) / 2;
      Json candidate = current_;
      candidate["duration_ms"] = mid;
      if (Try(candidate, "duration " + std::to_string(mid) + " ms")) {
        high = mid;
        changed = true;
      } else {
        low = mid + 1;
      }
    }
    // Every action earlier by the same amount: the largest shift that keeps the failure, halving.
    actions = ActionList();
    if (!actions.empty()) {
      for (int64_t shift = actions.front().value("at_ms", int64_t{0}); shift > 0 && Budget();
           shift /= 2) {
        std::vector<Json> moved = actions;
        for (Json& a : moved)
          a["at_ms"] = std::max<int64_t>(0, a.value("at_ms", int64_t{0}) - shift);
        if (Try(WithActions(moved), "every action " + std::to_string(shift) + " ms earlier")) {
          changed = true;
          break;
        }
      }
    }
    // Each action to its predecessor's time.
    actions = ActionList();
    for (size_t i = 0; i < actions.size() && Budget(); ++i) {
      const int64_t to = i == 0 ? 0 : actions[i - 1].value("at_ms", int64_t{0});
      if (actions[i].value("at_ms", int64_t{0}) == to) continue;
      std::vector<Json> moved = actions;
      moved[i]["at_ms"] = to;
      if (Try(WithActions(moved), "action " + std::to_string(i) + " at " + Seconds(to))) {
        actions = std::move(moved);
        changed = true;
      }
    }
    return changed;
  }

  bool ShrinkSize() {
    bool changed = false;
    while (Budget() && current_.contains("cluster") &&
           current_["cluster"].value("brokers", 3) > 1) {
      Json candidate = current_;
      const int brokers = current_["cluster"].value("brokers", 3) - 1;
      candidate["cluster"]["brokers"] = brokers;
      if (!Try(candidate, std::to_string(brokers) + " brokers")) break;
      changed = true;
    }
    if (current_.contains("topics") && current_["topics"].is_object()) {
      std::vector<std::string> names;
      for (const auto& [name, topic] : current_["topics"].items()) names.push_back(name);
      for (const std::string& name : names) {
        while (Budget() && current_["topics"][name].value("partitions", 1) > 1) {
          Json candidate = current_;
          Json& topic = candidate["topics"][name];
          const int partitions = topic.value("partitions", 1) - 1;
          topic["partitions"] = partitions;
          if (topic.contains("assignment") && topic["assignment"].is_object()) {
            topic["assignment"].erase(std::to_string(partitions));
          }
          if (!Try(candidate, name + ": " + std::to_string(partitions) + " partitions")) break;
          changed = true;
        }
      }
    }
    if (current_.contains("clients") && current_["clients"].is_object()) {
      std::vector<std::string> ids;
      for (const auto& [id, client] : current_["clients"].items()) ids.push_back(id);
      for (const std::string& id : ids) {
        if (!Budget()) break;
        Json candidate = current_;
        candidate["clients"].erase(id);
        if (Try(candidate, "drop client " + id)) {
          changed = true;
          continue;
        }
        for (const char* key : {"messages", "rate_per_s"}) {
          while (Budget() && current_["clients"][id].value(key, int64_t{0}) > 1) {
            Json smaller = current_;
            const int64_t value = current_["clients"][id].value(key, int64_t{0}) / 2;
            smaller["clients"][id][key] = value;
            if (!Try(smaller, id + ": " + key + " " + std::to_string(value))) break;
            changed = true;
          }
        }
      }
    }
    return changed;
  }

  // Each key of the object at `pointer` dropped in turn.
  bool DropKeys(const Json::json_pointer& pointer, const std::string& label) {
    bool changed = false;
    if (!current_.contains(pointer) || !current_[pointer].is_object()) return false;
    std::vector<std::string> keys;
    for (const auto& [key, value] : current_[pointer].items()) keys.push_back(key);
    for (const std::string& key : keys) {
      if (!Budget()) break;
      Json candidate = current_;
      candidate[pointer].erase(key);
      if (Try(candidate, "drop " + label + key)) changed = true;
    }
    return changed;
  }

  bool ShrinkSettings() {
    bool changed = false;
    changed |= DropKeys(Json::json_pointer("/cluster/config"), "cluster.config ");
    changed |= DropKeys(Json::json_pointer("/cluster/broker_config"), "broker_config ");
    changed |= DropKeys(Json::json_pointer("/cluster/zookeeper"), "cluster.zookeeper ");
    changed |= DropKeys(Json::json_pointer("/cluster/network"), "cluster.network ");
    changed |= DropKeys(Json::json_pointer("/cluster/disk"), "cluster.disk ");
    changed |= DropKeys(Json::json_pointer("/policy"), "policy ");
    for (const char* section : {"topics", "clients"}) {
      if (!current_.contains(section) || !current_[section].is_object()) continue;
      std::vector<std::string> names;
      for (const auto& [name, value] : current_[section].items()) names.push_back(name);
      for (const std::string& name : names) {
        changed |= DropKeys(Json::json_pointer("/" + std::string(section) + "/" + name + "/config"),
                            name + " config ");
      }
    }
    return changed;
  }

  std::string Describe(const RunResult& run) const {
    std::string text = "# Shrunk by ksim shrink\n\nA minimal scenario that fails `" +
                       target_.property + "` (signature `" + target_.signature + "`), from `" +
                       file_ + "` after " + std::to_string(runs_) + " runs.\n\nWhat happens " +
                       "(scenario time):\n";
    for (const ActionOutput& action : run.actions) {
      text +=
          "- " + Seconds(action.at_ms) + ": " + action.description +
          (action.skipped && !action.output.empty() ? " (skipped: " + action.output.front() + ")"
                                                    : "") +
          "\n";
    }
    if (run.actions.empty() && target_.property == "no_crash") {
      for (const Json& action : Actions(current_)) {
        text += "- " + Seconds(action.value("at_ms", int64_t{0})) + ": " +
                action.value("do", std::string()) + "\n";
      }
    } else if (run.actions.empty()) {
      text += "- no action: the settings alone\n";
    }
    text += "- " + Seconds(current_.value("duration_ms", int64_t{60000})) +
            ": the final phase heals and restarts what is down, then the audit\n\nThe failure: " +
            last_failure_.cause + "\n";
    return text;
  }

  Result<ShrinkResult> Run(const Json& document) {
    current_ = document;
    std::optional<std::vector<PropertyFailure>> failures = Failures(current_);
    if (!failures) return Status(Errc::kInvalidArgument, file_ + ": " + last_error_);
    if (failures->empty()) {
      return Status(Errc::kInvalidArgument, file_ + ": does not fail: every property holds");
    }
    target_ = failures->front();
    if (options_.signature) {
      auto found = std::find_if(failures->begin(), failures->end(), [&](const PropertyFailure& f) {
        return f.signature == *options_.signature || f.property == *options_.signature;
      });
      if (found == failures->end()) {
        std::string have;
        for (const PropertyFailure& f : *failures) have += "\n  " + f.signature;
        return Status(
            Errc::kInvalidArgument,
            file_ + ": does not fail with \"" + *options_.signature + "\"; it fails with:" + have);
      }
      target_ = *found;
    }
    last_failure_ = target_;
    log_("shrinking " + file_ + ": " + target_.signature);
    ShrinkResult result;
    result.actions_before = Actions(current_).size();
    for (int pass = 1; Budget(); ++pass) {
      log_("pass " + std::to_string(pass));
      bool changed = ShrinkActions();
      changed |= ShrinkTime();
      changed |= ShrinkSize();
      changed |= ShrinkSettings();
      if (!changed) break;
    }
    // The description is written from the minimal run, then the run is made once more with it
    // (it is in the trace): that run's hash is what `ksim run` replays.
    RunResult final_run;
    if (!FailsTheSame(current_, &final_run)) {
      return Status(Errc::kUnknownServerError, file_ + ": the minimal scenario stopped failing");
    }
    Json described = current_;
    described["description"] = Describe(final_run);
    RunResult described_run;
    if (!FailsTheSame(described, &described_run)) {
      return Status(Errc::kUnknownServerError,
                    file_ + ": the minimal scenario stopped failing once described");
    }
    result.document = std::move(described);
    result.failure = last_failure_;
    result.runs = runs_;
    result.steps_kept = kept_;
    result.actions_after = Actions(result.document).size();
    result.trace_hash = target_.property == "no_crash" ? 0 : described_run.trace_hash;
    return result;
  }

 private:
  std::string file_;
  const ShrinkOptions& options_;
  ShrinkLog log_;
  Json current_;
  PropertyFailure target_;
  PropertyFailure last_failure_;
  std::string last_error_;
  int32_t runs_ = 0;
  int32_t step_ = 0;
  int32_t kept_ = 0;
};

}  // namespace

Result<ShrinkResult> Shrink(const nlohmann::ordered_json& document, const std::string& file,
                            const ShrinkOptions& options, const ShrinkLog& log) {
  Shrinker shrinker(file, options, log ? log : ShrinkLog([](const std::string&) {}));
  return shrinker.Run(document);
}

}  // namespace ksim::sim
