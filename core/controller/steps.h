// Steps: how the controller sequences its asynchronous ZooKeeper work so that each procedure
// (failover, a broker change, ISR change notifications, ...) reads top to bottom, with its errors
// carried to the end instead of dropped (docs/controller.md, "Steps").
//
// A Step starts some work and calls the StepDone it was given exactly once: with Ok, or with the
// error that ends the procedure. It may call it inside its own call (synchronously, e.g. when
// there is nothing to read) or later (from a ZooKeeper callback). Steps compose:
//
//   InOrder({a, b, c}, done)  a; b once a is done; c once b is done. The first error skips the
//                             steps after it and goes to `done`; otherwise `done` gets Ok after c.
//   AllOf({a, b, c}, done)    a, b and c start at once, in that order (a fan-out); `done` runs once
//                             every one is done (the fan-in), with the first error in step order,
//                             or Ok. An error does not stop the others (they are already running).
//   ForEach(items, f, done)   AllOf of f(item, done) for each item, in the range's order.
//
// With no steps, `done` runs at once, inside the call. Values pass between steps through state the
// steps share (a struct held by a shared_ptr they capture, or the owner's members).
//
// Order and determinism: nothing here knows time, ZooKeeper or the controller; every step starts
// inside the call that completed the previous one (InOrder) or inside the composing call
// (AllOf), so the order of the work is that of the callbacks, exactly as with nested callbacks.
// InOrder runs steps that complete synchronously from a loop (a trampoline): a long chain of them
// does not grow the stack.
//
// Lifetime: a composition keeps its steps (and what they capture) and `done` alive until `done`
// has run, so a step may hand out pointers into state it captured. Nothing else owns it: the
// pending StepDone of the running step(s) does. When that StepDone is destroyed without being
// called (its owner dropped the callback: the controller crashed or resigned), everything is
// released and `done` never runs. An empty `done` is allowed (nobody to tell).
//
// REQUIRES: each StepDone is called at most once (checked). Single-threaded.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "core/base/status.h"

namespace ksim {

// What a step calls when it is over.
using StepDone = std::function<void(Status)>;
// One asynchronous step.
using Step = std::function<void(StepDone done)>;

// Runs `steps` one after the other; the first error ends the sequence.
void InOrder(std::vector<Step> steps, StepDone done);

// Runs `steps` at once and waits for all of them; `done` gets the first error in step order.
void AllOf(std::vector<Step> steps, StepDone done);

// AllOf of `step(item, done)` for each of `items`, in their order. `step` is copied into each.
template <class Range, class F>
void ForEach(const Range& items, F step, StepDone done) {
  std::vector<Step> steps;
  for (const auto& item : items) {
    steps.push_back([step, item](StepDone next) { step(item, std::move(next)); });
  }
  AllOf(std::move(steps), std::move(done));
}

}  // namespace ksim
