#include "app/session/training_session.hpp"

#include <algorithm>

namespace attnviz::app {

using Clock = std::chrono::steady_clock;

struct TrainingSession::Shared {
  std::mutex mutex;
  // Held by whoever reads or steps the trainer: the worker for a step and a frame, save().
  std::mutex trainer_mutex;
  std::condition_variable wake;
  // Under the mutex: what the UI asks for, and what the worker publishes.
  bool quit = false;
  bool running = false;
  int steps_asked = 0;  // single steps asked for while paused
  std::chrono::milliseconds delay{0};
  std::uint64_t generation = 0;  // a new run
  std::shared_ptr<Trainer> trainer;
  std::shared_ptr<const TrainingProgress> published;
  std::uint64_t version = 0;
  // The worker's own (only it touches them while a run goes on).
  std::vector<std::shared_ptr<const TrainingFrame>> frames;
  double seconds = 0.0;
  Clock::time_point last_publish{};

  std::shared_ptr<const TrainingFrame> frame_of(Trainer& run) {
    auto frame = std::make_shared<TrainingFrame>();
    frame->step = run.steps_taken();
    frame->attention = run.probe_attention();
    frame->weights = std::make_shared<const ParameterBuffer>(run.values());
    return frame;
  }
  void keep_frame(std::shared_ptr<const TrainingFrame> frame) {
    if (!frames.empty() && frames.back()->step == frame->step) frames.pop_back();
    frames.push_back(std::move(frame));
    if (frames.size() <= kMostFrames) return;
    std::vector<std::shared_ptr<const TrainingFrame>> thinned;
    for (std::size_t i = 0; i < frames.size(); ++i)
      if (i % 2 == 0 || i + 1 == frames.size()) thinned.push_back(frames[i]);
    frames = std::move(thinned);
  }
  // Builds the progress from the trainer; the caller holds no lock (the trainer is its own).
  std::shared_ptr<const TrainingProgress> progress_of(const Trainer& run, bool is_running,
                                                      const std::string& error) const {
    auto p = std::make_shared<TrainingProgress>();
    p->settings = run.settings();
    p->config = run.config();
    p->steps_taken = run.steps_taken();
    p->running = is_running && !run.done();
    p->done = run.done();
    p->error = error;
    p->losses = run.losses();
    p->scores = run.scores();
    p->phase_change = run.phase_change_step();
    p->probe = run.probe();
    p->frames = frames;
    p->seconds = seconds;
    return p;
  }
};

TrainingSession::TrainingSession(bool own_thread)
    : shared_(std::make_shared<Shared>()), own_thread_(own_thread) {
  if (!own_thread_) return;
  thread_ = std::thread([shared = shared_] {
    std::unique_lock lock(shared->mutex);
    for (;;) {
      shared->wake.wait(lock, [&] {
        return shared->quit || (shared->trainer && !shared->trainer->done() &&
                                (shared->running || shared->steps_asked > 0));
      });
      if (shared->quit) return;
      const std::shared_ptr<Trainer> trainer = shared->trainer;
      const std::uint64_t generation = shared->generation;
      const bool single = !shared->running;
      if (single) --shared->steps_asked;
      const std::chrono::milliseconds delay = shared->delay;
      lock.unlock();
      // One step, off the lock: the UI may ask for anything meanwhile.
      const Clock::time_point start = Clock::now();
      std::unique_lock trainer_lock(shared->trainer_mutex);
      Result<float> loss = trainer->step();
      trainer_lock.unlock();
      std::string error;
      if (!loss) error = "step " + std::to_string(trainer->steps_taken() + 1) + ": " + loss.error();
      lock.lock();
      if (generation != shared->generation) continue;  // a new run began meanwhile
      shared->seconds += std::chrono::duration<double>(Clock::now() - start).count();
      const bool stopped = !error.empty() || trainer->done();
      if (!error.empty()) shared->running = false;
      const int every = trainer->settings().score_every;
      const bool new_frame = trainer->steps_taken() % every == 0 || trainer->done();
      const bool publish = new_frame || stopped || single || !shared->running ||
                           Clock::now() - shared->last_publish > std::chrono::milliseconds(30);
      if (publish) {
        lock.unlock();
        trainer_lock.lock();
        std::shared_ptr<const TrainingFrame> frame;
        if (new_frame) frame = shared->frame_of(*trainer);
        lock.lock();
        if (generation != shared->generation) continue;
        if (frame) shared->keep_frame(std::move(frame));
        shared->published = shared->progress_of(*trainer, shared->running, error);
        trainer_lock.unlock();
        ++shared->version;
        shared->last_publish = Clock::now();
      }
      if (delay.count() > 0 && shared->running) {
        shared->wake.wait_for(lock, delay,
                              [&] { return shared->quit || generation != shared->generation; });
        if (shared->quit) return;
      }
    }
  });
}

TrainingSession::~TrainingSession() {
  {
    std::lock_guard lock(shared_->mutex);
    shared_->quit = true;
  }
  shared_->wake.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status TrainingSession::begin(const TrainingSettings& settings, const Model* from) {
  Result<Trainer> made = Trainer::make(settings, from);
  if (!made) return made.status();
  auto trainer = std::make_shared<Trainer>(std::move(*made));
  // The first frame, made before the worker may see the trainer.
  std::shared_ptr<const TrainingFrame> first = shared_->frame_of(*trainer);
  std::lock_guard lock(shared_->mutex);
  ++shared_->generation;
  shared_->trainer = trainer;
  shared_->running = false;
  shared_->steps_asked = 0;
  shared_->seconds = 0.0;
  shared_->frames.clear();
  shared_->keep_frame(std::move(first));
  shared_->published = shared_->progress_of(*trainer, false, {});
  ++shared_->version;
  shared_->wake.notify_all();
  return Status::success();
}

bool TrainingSession::has_run() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->trainer != nullptr;
}

void TrainingSession::resume() {
  std::lock_guard lock(shared_->mutex);
  if (!shared_->trainer || shared_->trainer->done()) return;
  shared_->running = true;
  if (shared_->published) {
    auto p = std::make_shared<TrainingProgress>(*shared_->published);
    p->running = true;
    shared_->published = std::move(p);
    ++shared_->version;
  }
  shared_->wake.notify_all();
}

void TrainingSession::pause() {
  std::lock_guard lock(shared_->mutex);
  shared_->running = false;
  if (shared_->published && shared_->published->running) {
    auto p = std::make_shared<TrainingProgress>(*shared_->published);
    p->running = false;
    shared_->published = std::move(p);
    ++shared_->version;
  }
}

void TrainingSession::step_once() {
  std::lock_guard lock(shared_->mutex);
  if (!shared_->trainer || shared_->running) return;
  ++shared_->steps_asked;
  shared_->wake.notify_all();
}

void TrainingSession::set_delay(std::chrono::milliseconds delay) {
  std::lock_guard lock(shared_->mutex);
  shared_->delay = std::max(delay, std::chrono::milliseconds(0));
  shared_->wake.notify_all();
}

std::shared_ptr<const TrainingProgress> TrainingSession::progress() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->published;
}

std::uint64_t TrainingSession::version() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->version;
}

void TrainingSession::pump(std::chrono::milliseconds budget) {
  if (own_thread_) return;
  Shared& s = *shared_;
  const Clock::time_point end = Clock::now() + budget;
  while (s.trainer && !s.trainer->done() && (s.running || s.steps_asked > 0)) {
    const bool single = !s.running;
    if (single) --s.steps_asked;
    const Clock::time_point start = Clock::now();
    Result<float> loss = s.trainer->step();
    s.seconds += std::chrono::duration<double>(Clock::now() - start).count();
    std::string error;
    if (!loss) {
      error = "step " + std::to_string(s.trainer->steps_taken() + 1) + ": " + loss.error();
      s.running = false;
    }
    if (s.trainer->steps_taken() % s.trainer->settings().score_every == 0 || s.trainer->done())
      s.keep_frame(s.frame_of(*s.trainer));
    s.published = s.progress_of(*s.trainer, s.running, error);
    ++s.version;
    if (!error.empty() || single || Clock::now() >= end) break;
    if (s.delay.count() > 0) break;  // one step a frame at most when slowed down
  }
}

Status TrainingSession::save(const std::string& folder, const TrainingFrame& frame) const {
  std::shared_ptr<Trainer> trainer;
  {
    std::lock_guard lock(shared_->mutex);
    trainer = shared_->trainer;
  }
  if (!trainer || !frame.weights) return Status::error("nothing trained to save");
  std::lock_guard trainer_lock(shared_->trainer_mutex);
  return save_gpt2_folder(folder, trainer->config(), trainer->table(), frame.weights->data(),
                          trainer->vocab_json(), trainer->merges_txt(), trainer->record_json(),
                          trainer->from().empty());
}

}  // namespace attnviz::app
