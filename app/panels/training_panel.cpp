// The Training view: a class watches a model learn. Choose a task (or the text in the sentence
// box) and a size, Start, and the loss falls while every head's attention on a probe (random
// letters written twice) changes in the grid; each head's induction score is a curve, and the
// step where one first passes 0.3 (the phase change: a head has started copying) is marked.
// The timeline scrubs back to any kept step; Use this model hands that model to every other view
// (an undoable edit: Ctrl+Z returns to the model before), Save writes it as a model folder.
// The training runs on a thread of its own (app/session/training_session.hpp): frames stay
// within their budget.
#include "app/panels/fit_part.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/plot_drawing.hpp"
#include "app/panels/registry.hpp"
#include "app/panels/theme.hpp"
#include "app/panels/widgets.hpp"
#include "app/render/heatmap_renderer.hpp"
#include "app/session/state_dir.hpp"
#include "app/session/training_session.hpp"
#include "core/models/head_roles.hpp"
#include "core/models/model.hpp"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace attnviz::app {
namespace {

// The tasks a teacher picks from, in the combo's order; the last trains on the sentence box.
struct TaskChoice {
  const char* label;
  TrainingTaskKind kind;
};
constexpr std::array<TaskChoice, 5> kTasks = {{
    {"Copy a span seen before (induction)", TrainingTaskKind::Induction},
    {"Copy a word: spam=spam", TrainingTaskKind::Copy},
    {"Reverse a word: spam=maps", TrainingTaskKind::Reverse},
    {"Sort a word's letters: spam=amps", TrainingTaskKind::Sort},
    {"The text in the sentence box", TrainingTaskKind::Text},
}};

// Steps a second: as fast as it goes, or slow enough to watch.
struct Speed {
  const char* label;
  int delay_ms;
};
constexpr std::array<Speed, 4> kSpeeds = {{{"as fast as it goes", 0},
                                           {"50 steps a second", 20},
                                           {"10 a second", 100},
                                           {"2 a second", 500}}};

class TrainingPanel final : public Panel {
 public:
  void draw_content(const AppState& state, PanelContext& context) override {
    const float font = ImGui::GetFontSize();
    // The one-layer scenario: its own W_Q and W_K learn (fit_part.hpp), or a new model does.
    if (!state.document.scenario().has_model()) {
      int kind = static_cast<int>(training_kind(state.ui));
      ImGui::TextUnformatted("Learns:");
      ImGui::SameLine();
      ImGui::RadioButton("this scenario's W_Q, W_K", &kind, 0);
      record_item_centre(state, "train.kind_weights");
      continue_line_if_fits(font * 8.0f, ImGui::GetStyle().ItemSpacing.x);
      ImGui::RadioButton("a new model", &kind, 1);
      record_item_centre(state, "train.kind_model");
      set_training_kind(context.ui, static_cast<TrainingKind>(kind));
      if (kind == static_cast<int>(TrainingKind::Weights)) {
        fit_.draw(state, context);
        return;
      }
    }
    draw_settings(state);
    std::shared_ptr<const TrainingProgress> progress = session_.progress();
    draw_controls(state, progress);
    session_.pump(std::chrono::milliseconds(8));  // the browser build: steps on this thread
    progress = session_.progress();
    if (!message_.empty()) text_wrapped_at_spaces(message_, ImGui::GetContentRegionAvail().x, true);
    if (!progress) {
      text_wrapped_at_spaces(
          "Nothing trained yet. A new model knows nothing: its attention is spread evenly and its "
          "guesses are even over its 257 tokens. Press Start and watch the loss fall, and the "
          "heads on the right find what to look at. With the first task a head learns to copy: "
          "to look at the token after where the current one appeared before (an induction "
          "head).",
          ImGui::GetContentRegionAvail().x, false);
      return;
    }
    const TrainingProgress& p = *progress;
    if (p.running) state.frame.redraw_within(1.0 / 30.0);  // the curves move while it trains
    state.frame.values.set("train.steps_taken", p.steps_taken);
    state.frame.values.set("train.frames", static_cast<int>(p.frames.size()));
    if (!p.losses.empty()) state.frame.values.set("train.last_loss", p.losses.back());
    draw_status(p);
    const int frame_index = shown_frame(p);
    const TrainingFrame& frame = *p.frames[static_cast<std::size_t>(frame_index)];
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float bottom = 2.6f * ImGui::GetFrameHeightWithSpacing();
    const float body = std::max(avail.y - bottom, 6.0f * font);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const Palette& colours = palette(state.ui.theme);
    ImDrawList* list = ImGui::GetWindowDrawList();
    if (avail.x >= 44.0f * font) {
      // Wide: the loss above each head's induction score on the left, the heads on the right.
      const float left = std::floor(avail.x * 0.5f);
      draw_loss(list, colours, p, frame.step, origin,
                ImVec2(origin.x + left - font, origin.y + body * 0.55f - font * 0.5f), font, state);
      draw_scores(list, colours, p, frame.step, ImVec2(origin.x, origin.y + body * 0.55f),
                  ImVec2(origin.x + left - font, origin.y + body), font, state);
      draw_heads(state, context, list, colours, p, frame, ImVec2(origin.x + left, origin.y),
                 ImVec2(origin.x + avail.x, origin.y + body), font);
    } else {
      // Narrow: the two curves side by side above the heads; in a small dashboard slot, the way
      // to room.
      const bool hint = !state.ui.presenter && body < 16.0f * font;
      if (hint)
        list->AddText(ImVec2(origin.x, origin.y + body - font * 1.2f), colours.text_dim,
                      "F5: presenter mode gives Training the whole window");
      const float curves = std::floor(body * 0.42f), half = std::floor(avail.x * 0.5f);
      draw_loss(list, colours, p, frame.step, origin,
                ImVec2(origin.x + half - font * 0.5f, origin.y + curves), font, state);
      draw_scores(list, colours, p, frame.step, ImVec2(origin.x + half, origin.y),
                  ImVec2(origin.x + avail.x, origin.y + curves), font, state);
      draw_heads(state, context, list, colours, p, frame,
                 ImVec2(origin.x, origin.y + curves + font * 0.5f),
                 ImVec2(origin.x + avail.x, origin.y + body - (hint ? font * 1.3f : 0.0f)), font);
    }
    ImGui::Dummy(ImVec2(avail.x, body));
    draw_timeline(p, frame_index);
    draw_use_and_save(state, context, p, frame);
  }

 private:
  TrainingSession session_;
  FitPart fit_;
  int task_ = 0;
  // The trainer's defaults (core/training/trainer.hpp).
  int layers_ = TrainingSettings{}.layers, heads_ = TrainingSettings{}.heads,
      width_ = TrainingSettings{}.d_model, steps_ = TrainingSettings{}.steps;
  int seed_ = 1;
  int speed_ = 0;
  bool follow_ = true;  // the timeline shows the latest step
  int chosen_frame_ = 0;
  std::string message_;
  bool from_model_ = false;     // go on training the model the views show
  std::uint64_t uploaded_ = 0;  // the frame whose attention is in the textures
  std::vector<std::unique_ptr<render::MatrixStackTexture>> textures_;  // one per layer
  std::vector<Matrix> shown_weights_;  // the frame's attention, (n, n) per head

  void draw_settings(const AppState& state) {
    const float font = ImGui::GetFontSize();
    ImGui::SetNextItemWidth(font * 17.0f);
    ImGui::Combo(
        "##task", &task_,
        [](void*, int i, const char** out) {
          *out = kTasks[static_cast<std::size_t>(i)].label;
          return true;
        },
        nullptr, static_cast<int>(kTasks.size()));
    const auto number = [&](const char* label, int& value, int low, int high, float width) {
      continue_line_if_fits(font * (width + 4.0f), ImGui::GetStyle().ItemSpacing.x);
      ImGui::SetNextItemWidth(font * width);
      if (ImGui::InputInt(label, &value, 0, 0)) value = std::clamp(value, low, high);
    };
    // Fine-tuning: the GPT-2 model the views show, as it is (edits included), with its tokenizer.
    const Model* model = model_in_use(state);
    if (!model) from_model_ = false;
    if (model) {
      const std::string label = "go on from " + model->name;
      continue_line_if_fits(ImGui::CalcTextSize(label.c_str()).x + font * 2.0f,
                            ImGui::GetStyle().ItemSpacing.x);
      ImGui::Checkbox(label.c_str(), &from_model_);
    }
    if (from_model_) {  // the model's own shape, shown and not changed
      const TransformerConfig& c = model->transformer.config();
      int layers = c.n_layers, heads = c.n_heads, width = c.d_model;
      ImGui::BeginDisabled();
      number("layers", layers, layers, layers, 2.5f);
      number("heads", heads, heads, heads, 2.5f);
      number("width", width, width, width, 3.0f);
      ImGui::EndDisabled();
    } else {
      number("layers", layers_, 1, 8, 2.5f);
      number("heads", heads_, 1, 16, 2.5f);
      number("width", width_, 4, 512, 3.0f);
    }
    number("steps", steps_, 1, 100000, 4.0f);
    number("seed", seed_, 0, 1000000, 3.5f);
  }

  // The model the views show, when training can go on from it (a GPT-2); else null.
  static const Model* model_in_use(const AppState& state) {
    const Model* model = state.pipeline().current().trained_model();
    return model && model->location.format == ModelFormat::HuggingFaceGpt2 &&
                   model->transformer.encoder() == nullptr
               ? model
               : nullptr;
  }

  TrainingSettings settings_from(const AppState& state) const {
    TrainingSettings s;
    s.task = kTasks[static_cast<std::size_t>(task_)].kind;
    if (s.task == TrainingTaskKind::Text) s.text = state.document.scenario().target;
    s.layers = layers_;
    s.heads = heads_;
    s.d_model = width_;
    s.steps = steps_;
    s.seed = static_cast<std::uint64_t>(seed_);
    s.optimizer.total_steps = steps_;
    return s;
  }

  void draw_controls(const AppState& state,
                     const std::shared_ptr<const TrainingProgress>& progress) {
    const float font = ImGui::GetFontSize();
    const bool start = ImGui::Button(progress ? "Start again" : "Start");
    record_item_centre(state, "train.start");
    if (start || state.frame.start_training) {
      state.frame.start_training = false;
      const Status began =
          session_.begin(settings_from(state), from_model_ ? model_in_use(state) : nullptr);
      message_ = began ? std::string() : began.message();
      if (began) session_.resume();
      follow_ = true;
    }
    const bool running = progress && progress->running;
    const bool done = progress && progress->done;
    ImGui::SameLine();
    ImGui::BeginDisabled(!progress || done);
    if (ImGui::Button(running ? "Pause" : "Resume")) running ? session_.pause() : session_.resume();
    ImGui::SameLine();
    ImGui::BeginDisabled(running);
    if (ImGui::Button("Step")) session_.step_once();
    ImGui::EndDisabled();
    ImGui::EndDisabled();
    continue_line_if_fits(font * 12.0f, ImGui::GetStyle().ItemSpacing.x);
    ImGui::SetNextItemWidth(font * 10.0f);
    if (ImGui::Combo(
            "speed", &speed_,
            [](void*, int i, const char** out) {
              *out = kSpeeds[static_cast<std::size_t>(i)].label;
              return true;
            },
            nullptr, static_cast<int>(kSpeeds.size())))
      session_.set_delay(
          std::chrono::milliseconds(kSpeeds[static_cast<std::size_t>(speed_)].delay_ms));
  }

  void draw_status(const TrainingProgress& p) {
    std::string line =
        "Step " + std::to_string(p.steps_taken) + " of " + std::to_string(p.settings.steps);
    if (!p.losses.empty()) {
      char loss[64];
      std::snprintf(loss, sizeof loss, " \xc2\xb7 loss %.3f", static_cast<double>(p.losses.back()));
      line += loss;
    }
    if (p.phase_change)
      line += *p.phase_change == 0
                  ? std::string(" \xc2\xb7 a head copied from the start")
                  : " \xc2\xb7 phase change at step " + std::to_string(*p.phase_change);
    char seconds[48];
    std::snprintf(seconds, sizeof seconds, " \xc2\xb7 %.1f s", p.seconds);
    line += seconds;
    if (p.done) line += " \xc2\xb7 done";
    ImGui::TextUnformatted(line.c_str());
    if (!p.error.empty()) text_wrapped_at_spaces(p.error, ImGui::GetContentRegionAvail().x, true);
  }

  int shown_frame(const TrainingProgress& p) {
    const int last = static_cast<int>(p.frames.size()) - 1;
    if (follow_) chosen_frame_ = last;
    chosen_frame_ = std::clamp(chosen_frame_, 0, last);
    return chosen_frame_;
  }

  // A plot's frame: its box, and x from step 0 to the run's last step.
  struct Plot {
    ImVec2 p0, p1;
    float steps;
    float x(float step) const {
      return p0.x + (p1.x - p0.x) * std::clamp(step / steps, 0.0f, 1.0f);
    }
  };

  void axes(ImDrawList* list, const Palette& colours, const Plot& plot, const char* title,
            float font) const {
    list->AddRect(plot.p0, plot.p1, colours.grid);
    list->AddText(ImVec2(plot.p0.x + font * 0.3f, plot.p0.y + font * 0.1f), colours.text, title);
  }

  void mark_step(ImDrawList* list, const Palette& colours, const Plot& plot, int step,
                 const std::optional<int>& phase_change, float font) const {
    if (phase_change) {
      const float x = plot.x(static_cast<float>(*phase_change));
      add_dashed_line(list, ImVec2(x, plot.p0.y), ImVec2(x, plot.p1.y), colours.highlight, 1.5f,
                      font * 0.4f);
    }
    const float x = plot.x(static_cast<float>(step));
    list->AddLine(ImVec2(x, plot.p0.y), ImVec2(x, plot.p1.y), colours.selection, 2.0f);
  }

  void draw_loss(ImDrawList* list, const Palette& colours, const TrainingProgress& p, int step,
                 ImVec2 p0, ImVec2 p1, float font, const AppState& state) const {
    if (p1.y - p0.y < font * 3.0f) return;
    const Plot plot{p0, p1, static_cast<float>(std::max(p.settings.steps, 1))};
    axes(list, colours, plot, "loss (lower: better guesses)", font);
    if (p.losses.empty()) return;
    float top = 0.0f;
    for (float loss : p.losses)
      if (std::isfinite(loss)) top = std::max(top, loss);
    top = std::max(top, 1e-3f);
    // One point a pixel column: the mean of the steps it covers.
    const int columns = std::max(1, static_cast<int>(p1.x - p0.x));
    std::vector<ImVec2> points;
    const float per_column = plot.steps / static_cast<float>(columns);
    for (int c = 0; c < columns; ++c) {
      const int first = static_cast<int>(static_cast<float>(c) * per_column);
      const int last = std::min(static_cast<int>(static_cast<float>(c + 1) * per_column),
                                static_cast<int>(p.losses.size()));
      if (first >= static_cast<int>(p.losses.size())) break;
      double sum = 0.0;
      int count = 0;
      for (int i = first; i < std::max(last, first + 1); ++i, ++count)
        sum += static_cast<double>(p.losses[static_cast<std::size_t>(i)]);
      const float mean = static_cast<float>(sum / count);
      const float y = p1.y - (p1.y - p0.y - font * 1.4f) * std::clamp(mean / top, 0.0f, 1.0f);
      points.push_back(ImVec2(p0.x + static_cast<float>(c), y));
    }
    list->AddPolyline(points.data(), static_cast<int>(points.size()),
                      head_colour(state.ui.theme, 0), 0, 2.0f);
    char label[48];
    std::snprintf(label, sizeof label, "%.2f", static_cast<double>(top));
    list->AddText(ImVec2(p1.x - ImGui::CalcTextSize(label).x - font * 0.3f, p0.y + font * 0.1f),
                  colours.text_dim, label);
    mark_step(list, colours, plot, step, p.phase_change, font);
  }

  void draw_scores(ImDrawList* list, const Palette& colours, const TrainingProgress& p, int step,
                   ImVec2 p0, ImVec2 p1, float font, const AppState& state) const {
    if (p1.y - p0.y < font * 3.0f) return;
    const Plot plot{p0, p1, static_cast<float>(std::max(p.settings.steps, 1))};
    axes(list, colours, plot, "each head's induction score (0 to 1)", font);
    const float threshold = role_threshold(HeadRole::Induction);
    const float height = p1.y - p0.y - font * 1.4f;
    const auto y_of = [&](float score) { return p1.y - height * std::clamp(score, 0.0f, 1.0f); };
    add_dashed_line(list, ImVec2(p0.x, y_of(threshold)), ImVec2(p1.x, y_of(threshold)),
                    colours.grid, 1.0f, font * 0.3f);
    const int heads = p.config.n_layers * p.config.n_heads;
    std::vector<ImVec2> points;
    for (int h = 0; h < heads; ++h) {
      points.clear();
      for (const HeadScoresAt& at : p.scores)
        if (static_cast<std::size_t>(h) < at.induction.size())
          points.push_back(ImVec2(plot.x(static_cast<float>(at.step)),
                                  y_of(at.induction[static_cast<std::size_t>(h)])));
      if (points.size() >= 2)
        list->AddPolyline(points.data(), static_cast<int>(points.size()),
                          head_colour(state.ui.theme, h), 0, 1.5f);
    }
    mark_step(list, colours, plot, step, p.phase_change, font);
  }

  void upload(PanelContext& context, const TrainingProgress& p, const TrainingFrame& frame) {
    const auto key = static_cast<std::uint64_t>(frame.step) * 1000003u +
                     static_cast<std::uint64_t>(p.settings.seed) + 1u;
    if (key == uploaded_ && textures_.size() == static_cast<std::size_t>(p.config.n_layers)) return;
    uploaded_ = key;
    shown_weights_ = frame.attention;
    textures_.resize(static_cast<std::size_t>(p.config.n_layers));
    for (auto& texture : textures_)
      if (!texture) texture = std::make_unique<render::MatrixStackTexture>();
    if (!context.heatmaps.ok() || shown_weights_.empty()) return;
    std::vector<const Matrix*> stack;
    for (int l = 0; l < p.config.n_layers; ++l) {
      stack.clear();
      for (int h = 0; h < p.config.n_heads; ++h)
        stack.push_back(&shown_weights_[static_cast<std::size_t>(l * p.config.n_heads + h)]);
      textures_[static_cast<std::size_t>(l)]->update(stack, key);
    }
  }

  void draw_heads(const AppState& state, PanelContext& context, ImDrawList* list,
                  const Palette& colours, const TrainingProgress& p, const TrainingFrame& frame,
                  ImVec2 p0, ImVec2 p1, float font) {
    upload(context, p, frame);
    const int layers = p.config.n_layers, heads = p.config.n_heads;
    if (shown_weights_.size() != static_cast<std::size_t>(layers * heads)) return;
    const std::string title = "Each head on the probe, step " + std::to_string(frame.step);
    list->AddText(p0, colours.text, title.c_str());
    const float top = p0.y + font * 1.4f;
    const float cell_w = (p1.x - p0.x) / static_cast<float>(heads);
    const float cell_h = (p1.y - top) / static_cast<float>(layers);
    const float side = std::max(std::min(cell_w - font * 0.4f, cell_h - font * 1.5f), 4.0f);
    // The scores at the shown step: the last measured at or before it.
    const HeadScoresAt* scores = nullptr;
    for (const HeadScoresAt& at : p.scores)
      if (at.step <= frame.step) scores = &at;
    for (int l = 0; l < layers; ++l) {
      for (int h = 0; h < heads; ++h) {
        const ImVec2 cell(p0.x + cell_w * static_cast<float>(h),
                          top + cell_h * static_cast<float>(l));
        const ImVec2 a(cell.x, cell.y + font * 1.2f), b(a.x + side, a.y + side);
        const auto index = static_cast<std::size_t>(l * heads + h);
        if (context.heatmaps.ok())
          context.heatmaps.draw(list, *textures_[static_cast<std::size_t>(l)], h, a, b,
                                state.ui.colormap, 0.0f, 1.0f);
        else
          list->AddRectFilled(a, b, colours.chip);
        list->AddRect(a, b, colours.grid);
        char label[64];
        const float induction =
            scores && index < scores->induction.size() ? scores->induction[index] : 0.0f;
        // "L1 H2 0.62" (the head's induction score), or the score alone in a narrow tile.
        std::snprintf(label, sizeof label, "L%d H%d %.2f", l + 1, h + 1,
                      static_cast<double>(induction));
        if (ImGui::CalcTextSize(label).x > side)
          std::snprintf(label, sizeof label, "%.2f", static_cast<double>(induction));
        list->AddText(
            cell,
            induction >= role_threshold(HeadRole::Induction) ? colours.highlight : colours.text_dim,
            label);
      }
    }
  }

  void draw_timeline(const TrainingProgress& p, int frame_index) {
    const float font = ImGui::GetFontSize();
    ImGui::SetNextItemWidth(std::max(ImGui::GetContentRegionAvail().x - font * 9.0f, font * 6.0f));
    int chosen = frame_index;
    const std::string label =
        "step " + std::to_string(p.frames[static_cast<std::size_t>(chosen)]->step);
    if (ImGui::SliderInt("##timeline", &chosen, 0, static_cast<int>(p.frames.size()) - 1,
                         label.c_str())) {
      chosen_frame_ = chosen;
      follow_ = chosen == static_cast<int>(p.frames.size()) - 1;
    }
    ImGui::SameLine();
    ImGui::Checkbox("latest", &follow_);
  }

  void draw_use_and_save(const AppState& state, PanelContext& context, const TrainingProgress& p,
                         const TrainingFrame& frame) {
    const bool use_it = ImGui::Button("Use this model");
    record_item_centre(state, "train.use");
    if (use_it) use(context, p, frame);
    ImGui::SameLine();
    // Where to save is asked in the app's file dialog, the name proposed from the run and the
    // step shown; the frame is kept as it is now (the slider may move while the dialog is open).
    const bool save = ImGui::Button("Save as\xe2\x80\xa6");
    record_item_centre(state, "train.save");
    if (save) {
      const char* home = std::getenv("HOME");
      context.commands.save_with_dialog(
          {"Save the trained model as a folder", "attnviz-" + name_of(p, frame), "",
           home != nullptr ? home : "",
           [this, frame](const std::string& folder) { return session_.save(folder, frame); },
           "saved the trained model into "});
    }
  }

  // Where the last button is, for the tests that click it ("train.start_x", "train.start_y").
  static std::string name_of(const TrainingProgress& p, const TrainingFrame& frame) {
    return std::string(to_string(p.settings.task)) + "-seed" + std::to_string(p.settings.seed) +
           "-step" + std::to_string(frame.step);
  }

  // Saves the frame in the state folder and opens it: every other view reads it (an edit of the
  // document: undo returns to the model before).
  void use(PanelContext& context, const TrainingProgress& p, const TrainingFrame& frame) {
    const std::string dir = app_state_dir();
    if (dir.empty()) {
      message_ = "No folder to keep the model in (HOME is not set): use Save as.";
      return;
    }
    const std::string folder =
        (std::filesystem::path(dir) / "trained" / name_of(p, frame)).string();
    if (const Status saved = session_.save(folder, frame); !saved) {
      message_ = saved.message();
      return;
    }
    ModelSpec spec;
    spec.model = folder;
    Edit edit = edits::set_model(std::move(spec));
    edit.label = "use the model trained to step " + std::to_string(frame.step);
    context.edits.push(std::move(edit));
    // The probe as text: what the model was measured on (a byte model reads it letter by letter).
    if (p.config.vocab_size == 257) {
      std::string text;
      for (int id : p.probe)
        if (id >= 0 && id < 256) text += static_cast<char>(id);
      if (!text.empty()) context.edits.push(edits::set_target(text));
    }
    context.ui.center_view = view::ViewId::Model;
    message_ = "The model at step " + std::to_string(frame.step) +
               " is now the one every view shows (Ctrl+Z returns to the one before).";
  }
};

}  // namespace

ATTNVIZ_REGISTER_PANEL(view::ViewId::Training, TrainingPanel);

}  // namespace attnviz::app
