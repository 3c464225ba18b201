// Pictures of the window or of a panel: File > Export's PNG, taken after the frame that follows
// the file dialog has rendered (at the export's scale, glyphs rasterized to match), compressed
// and written on a thread of their own while the app goes on drawing; and the headless
// screenshots (headless.cpp).
#include <imgui.h>
#include <stb_image_write.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "app/platform/platform.hpp"
#include "app/shell/commands.hpp"
#include "core/base/threads.hpp"
#include "core/document/file_io.hpp"

namespace attnviz::app {

Result<Picture> take_picture(platform::Backend& backend, const view::Rect& crop, int scale_factor) {
  Result<platform::Image> image = scale_factor > 1 ? backend.render_offscreen(scale_factor)
                                                   : Result<platform::Image>(backend.read_pixels());
  if (!image) return image.status();
  if (image->pixels.empty()) return Status::error("cannot read the picture");
  const int width = image->width, height = image->height;
  // The crop is in layout coordinates: pixels per layout unit follow the picture's size.
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const ImVec2 scale(static_cast<float>(width) / display.x, static_cast<float>(height) / display.y);
  Picture picture{0, 0, width, height, width, std::move(image->pixels)};
  if (!crop.empty()) {
    picture.x = std::clamp(static_cast<int>(crop.x * scale.x), 0, width - 1);
    picture.y = std::clamp(static_cast<int>(crop.y * scale.y), 0, height - 1);
    picture.width = std::clamp(static_cast<int>(crop.w * scale.x), 1, width - picture.x);
    picture.height = std::clamp(static_cast<int>(crop.h * scale.y), 1, height - picture.y);
  }
  return picture;
}

Status save_picture(const Picture& picture, const std::string& path) {
  const std::uint8_t* first =
      picture.pixels.data() +
      (static_cast<std::size_t>(picture.y) * static_cast<std::size_t>(picture.stride) +
       static_cast<std::size_t>(picture.x)) *
          4;
  // Compressed in memory, then written as every file is (core/document/file_io.hpp).
  std::string png;
  const auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data),
                                               static_cast<std::size_t>(size));
  };
  if (!stbi_write_png_to_func(append, &png, picture.width, picture.height, 4, first,
                              picture.stride * 4))
    return Status::error("cannot make the PNG for " + path);
  return write_file(path, png);
}

Status write_png(platform::Backend& backend, const std::string& path, const view::Rect& crop,
                 int scale) {
  const Result<Picture> picture = take_picture(backend, crop, scale);
  return picture ? save_picture(*picture, path) : picture.status();
}

void capture_png_if_requested(Shell& shell, Commands& commands) {
  PngExport& png = shell.png;
  platform::Backend& backend = shell.backend;
  // The frame in which the file dialog gave the path still shows the dialog: the next one.
  if (ImGui::GetFrameCount() <= png.request->frame) {
    backend.render_without_present();
    return;
  }
  const float detail = static_cast<float>(png.request->scale);
  if (shell.fonts.loaded_detail !=
      detail) {  // rasterize the glyphs at the scale first (next frame)
    shell.fonts.detail = detail;
    backend.render_without_present();
    return;
  }
  backend.render_without_present();
  // The picture is taken now; compressing and writing it (a second or so at 2x) goes on on a
  // thread of its own while the app goes on drawing.
  Result<Picture> picture = take_picture(backend, png.request->crop, png.request->scale);
  if (!picture) {
    commands.report(picture.status(), "");
  } else {
    finish_png_export(shell, commands, true);  // one at a time
    png.writing_path = png.request->path;
    png.writing =
        std::async(kAsyncLaunch, [picture = std::move(*picture), path = png.request->path] {
          return save_picture(picture, path);
        });
  }
  png.request.reset();
  shell.fonts.detail = 1;  // back to the screen's glyphs on the next frame
}

void finish_png_export(Shell& shell, Commands& commands, bool wait) {
  std::future<Status>& writing = shell.png.writing;
  if (!writing.valid()) return;
  // Without threads (kAsyncLaunch) the future is deferred: writing.get() writes it now.
  if (!wait && writing.wait_for(std::chrono::seconds(0)) == std::future_status::timeout) {
    shell.state.frame.redraw_within(0.05);  // look again soon
    return;
  }
  const Status status = writing.get();
  commands.report(status, "exported " + shell.png.writing_path);
  if (status && platform::kBrowser) platform::offer_download(shell.png.writing_path);
}

}  // namespace attnviz::app
