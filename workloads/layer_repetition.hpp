// The fast path's layer repetition for a builder's loop over model layers (TaskGraph::repeat, task_graph.hpp).
//
//   for each layer:  if (rep.copy(key, ready)) continue;  rep.begin(key, ready);  build the layer;  rep.end(ready);
//
// `model_layer_step`: how the model layer moves from one layer of the loop to the next (+1 forward, -1 for a
// training backward pass, last layer first).
// `key` names everything the layer's building reads besides its input tasks (its kinds, FFN, token layout, the
// builder's state): layers of one key are built alike. Once two consecutive layers of a key are built and the
// second is the first moved (tasks, dependencies, stream tails and the tasks the next layer waits for), every
// further layer of that key is copied from the one before. Off (run.fast_path: false), every layer is built.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "workloads/collectives.hpp"
#include "workloads/task_graph.hpp"

namespace cpsim {

class LayerRepetition {
 public:
  using Ready = std::vector<RankTasks>;  // what the next layer waits for, per micro-batch and GPU
  LayerRepetition(TaskGraph& graph, bool enabled, int model_layer_step = 1)
      : g_(graph), enabled_(enabled), model_layer_step_(model_layer_step) {}

  // Copies the last layer if it was verified and has this key; `ready` then names the copy's outputs.
  bool copy(const std::string& key, Ready& ready) {
    if (!enabled_ || !verified_ || key != key_) return false;
    const TaskGraph::Mark start = g_.mark();
    g_.repeat(last_, model_layer_step_);
    for (RankTasks& per_gpu : ready)
      for (std::vector<TaskId>& ids : per_gpu)
        for (TaskId& id : ids) id = g_.moved(id, last_, start);
    last_ = start;
    return true;
  }

  // A layer of `key` is about to be built from `ready`.
  void begin(const std::string& key, const Ready& ready) {
    if (!enabled_) return;
    verified_ = false;
    has_previous_ = has_last_ && key == key_;
    if (has_previous_) {
      previous_ = std::move(last_);
      previous_outputs_ = ready;
    }
    last_ = g_.mark();
    has_last_ = true;
    key_ = key;
  }

  // The layer begun is built; `ready` are its outputs.
  void end(const Ready& ready) {
    if (!enabled_ || !has_previous_) return;
    verified_ = g_.repeats(previous_, last_, model_layer_step_) && outputs_moved(ready);
  }

 private:
  bool outputs_moved(const Ready& ready) const {
    if (ready.size() != previous_outputs_.size()) return false;
    for (std::size_t mb = 0; mb < ready.size(); ++mb) {
      if (ready[mb].size() != previous_outputs_[mb].size()) return false;
      for (std::size_t gpu = 0; gpu < ready[mb].size(); ++gpu) {
        const auto &now = ready[mb][gpu], &before = previous_outputs_[mb][gpu];
        if (now.size() != before.size()) return false;
        for (std::size_t i = 0; i < now.size(); ++i)
          if (!g_.is_moved(before[i], now[i], previous_, last_)) return false;
      }
    }
    return true;
  }

  TaskGraph& g_;
  bool enabled_;
  int model_layer_step_;
  bool has_last_ = false, has_previous_ = false, verified_ = false;
  std::string key_;
  TaskGraph::Mark last_, previous_;  // where the last layer built (or copied) began, and the one before it
  Ready previous_outputs_;           // the previous layer's outputs (the last layer's inputs)
};

}  // namespace cpsim
