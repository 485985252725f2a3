#include "core/controller/steps.h"

#include <cstddef>
#include <memory>

#include "core/base/check.h"

namespace ksim {
namespace {

// InOrder's state, owned by the StepDone of the running step.
struct Sequence {
  std::vector<Step> steps;
  StepDone done;
  size_t started = 0;    // steps started so far; the running one is started - 1
  size_t finished = 0;   // steps that called their StepDone
  bool looping = false;  // Run's loop is on the stack: a step finishing now returns to it
  Status error;
};

void Run(std::shared_ptr<Sequence> sequence);

StepDone FinishStep(std::shared_ptr<Sequence> sequence, size_t index) {
  return [sequence = std::move(sequence), index](Status status) {
    KSIM_CHECK(index + 1 == sequence->started);  // only the running step finishes
    KSIM_CHECK(sequence->finished == index);     // and only once
    sequence->finished = index + 1;
    if (!status.ok()) sequence->error = std::move(status);
    if (sequence->looping) return;  // it finished inside its own call: the loop goes on
    Run(sequence);
  };
}

void Run(std::shared_ptr<Sequence> sequence) {
  sequence->looping = true;
  while (sequence->error.ok() && sequence->started < sequence->steps.size()) {
    const size_t index = sequence->started++;
    sequence->steps[index](FinishStep(sequence, index));
    if (sequence->finished == index) {
      // Still running: its StepDone resumes the sequence when it is called.
      sequence->looping = false;
      return;
    }
  }
  sequence->looping = false;
  if (!sequence->done) return;
  StepDone done = std::move(sequence->done);
  done(std::move(sequence->error));
}

// AllOf's state, owned by the StepDones of the steps still running.
struct FanIn {
  std::vector<Step> steps;
  StepDone done;
  std::vector<bool> finished;
  size_t pending = 0;  // steps still running, plus one while AllOf is starting them
  size_t first_error_index = 0;
  Status first_error;
};

void Arrive(FanIn& fan_in) {
  KSIM_CHECK(fan_in.pending > 0);
  if (--fan_in.pending > 0) return;
  if (!fan_in.done) return;
  StepDone done = std::move(fan_in.done);
  done(std::move(fan_in.first_error));
}

}  // namespace

void InOrder(std::vector<Step> steps, StepDone done) {
  auto sequence = std::make_shared<Sequence>();
  sequence->steps = std::move(steps);
  sequence->done = std::move(done);
  Run(std::move(sequence));
}

void AllOf(std::vector<Step> steps, StepDone done) {
  auto fan_in = std::make_shared<FanIn>();
  fan_in->steps = std::move(steps);
  fan_in->done = std::move(done);
  const size_t count = fan_in->steps.size();
  fan_in->finished.assign(count, false);
  fan_in->first_error_index = count;
  // The extra one is this call's own: a step finishing inside its call cannot end the fan-in
  // before the steps after it have started.
  fan_in->pending = count + 1;
  for (size_t index = 0; index < count; ++index) {
    fan_in->steps[index]([fan_in, index](Status status) {
      KSIM_CHECK(!fan_in->finished[index]);  // each StepDone once
      fan_in->finished[index] = true;
      if (!status.ok() && index < fan_in->first_error_index) {
        fan_in->first_error_index = index;
        fan_in->first_error = std::move(status);
      }
      Arrive(*fan_in);
    });
  }
  Arrive(*fan_in);
}

}  // namespace ksim
