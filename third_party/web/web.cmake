# The browser build (issue 27), configured with Emscripten's toolchain by `make web`: the same
# sources, compiled to WebAssembly. Included by the top CMakeLists.txt when EMSCRIPTEN is set.
#
# Dependencies, all from Debian's archive:
#   - Eigen, nlohmann-json and stb are header libraries: Debian's headers, through a folder of
#     links (host-include/) so that /usr/include itself, whose C library is not Emscripten's, is
#     never searched.
#   - Dear ImGui: Debian's libimgui-dev has no sources, so its source package (1.86+ds, the same
#     version) is downloaded from Debian's archive once, checked against the SHA-256 of its .dsc,
#     and compiled here for WebGL 2 (OpenGL ES 3).
#   - GLFW, OpenGL ES and the C and C++ libraries are Emscripten's own (Debian's emscripten).

# C++ exceptions are caught where input is bad (a scenario's JSON, a lesson's): on, in every
# translation unit and at the link (Emscripten's JavaScript-based exceptions, whose libraries
# Debian's emscripten ships built).
add_compile_options(-fexceptions)
add_link_options(-fexceptions)

# Emscripten's link step runs its JavaScript optimizer in Node with Debian's node-acorn, which a
# Node.js not from Debian (NodeSource's, say) does not look for in /usr/share/nodejs.
set(CMAKE_CXX_LINKER_LAUNCHER ${CMAKE_COMMAND} -E env NODE_PATH=/usr/share/nodejs)

set(ATTNVIZ_HOST_INCLUDE ${CMAKE_BINARY_DIR}/host-include)
file(MAKE_DIRECTORY ${ATTNVIZ_HOST_INCLUDE})
foreach(link Eigen:/usr/include/eigen3/Eigen unsupported:/usr/include/eigen3/unsupported
             nlohmann:/usr/include/nlohmann stb:/usr/include/stb)
  string(REPLACE ":" ";" parts ${link})
  list(GET parts 0 name)
  list(GET parts 1 target)
  if(NOT EXISTS ${target})
    message(FATAL_ERROR "${target} not found: run third_party/install-deps.sh web")
  endif()
  file(CREATE_LINK ${target} ${ATTNVIZ_HOST_INCLUDE}/${name} SYMBOLIC)
endforeach()

add_library(Eigen3::Eigen INTERFACE IMPORTED)
target_include_directories(Eigen3::Eigen SYSTEM INTERFACE ${ATTNVIZ_HOST_INCLUDE})
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
target_include_directories(nlohmann_json::nlohmann_json SYSTEM INTERFACE ${ATTNVIZ_HOST_INCLUDE})

# Dear ImGui 1.86 from Debian's source package.
set(ATTNVIZ_IMGUI_TARBALL imgui_1.86+ds.orig.tar.xz)
set(ATTNVIZ_IMGUI_SHA256 0dace0e8e57d298eb6e93af12dc19420cb96330832f6495c733b90aeeef11f64)
set(ATTNVIZ_IMGUI_DIR ${CMAKE_BINARY_DIR}/deps/imgui-1.86)
if(NOT EXISTS ${ATTNVIZ_IMGUI_DIR}/imgui.cpp)
  set(tarball ${CMAKE_BINARY_DIR}/deps/${ATTNVIZ_IMGUI_TARBALL})
  message(STATUS "Downloading Dear ImGui 1.86's sources from Debian's archive")
  file(DOWNLOAD http://deb.debian.org/debian/pool/main/i/imgui/${ATTNVIZ_IMGUI_TARBALL} ${tarball}
       EXPECTED_HASH SHA256=${ATTNVIZ_IMGUI_SHA256} STATUS download_status)
  list(GET download_status 0 download_code)
  if(NOT download_code EQUAL 0)
    message(FATAL_ERROR "cannot download ${ATTNVIZ_IMGUI_TARBALL} from deb.debian.org: ${download_status}")
  endif()
  file(ARCHIVE_EXTRACT INPUT ${tarball} DESTINATION ${CMAKE_BINARY_DIR}/deps)
endif()
file(CREATE_LINK ${ATTNVIZ_IMGUI_DIR} ${ATTNVIZ_HOST_INCLUDE}/imgui SYMBOLIC)

# ImGui uses stb's truetype and rect-pack from Debian's libstb-dev headers, as Debian's own
# libimgui does; their implementations (and stb_image_write's, for PNG export) are compiled once,
# in stb_implementation.cpp.
add_library(attnviz_imgui STATIC
  ${ATTNVIZ_IMGUI_DIR}/imgui.cpp ${ATTNVIZ_IMGUI_DIR}/imgui_draw.cpp
  ${ATTNVIZ_IMGUI_DIR}/imgui_tables.cpp ${ATTNVIZ_IMGUI_DIR}/imgui_widgets.cpp
  ${ATTNVIZ_IMGUI_DIR}/misc/cpp/imgui_stdlib.cpp
  ${ATTNVIZ_IMGUI_DIR}/backends/imgui_impl_glfw.cpp ${ATTNVIZ_IMGUI_DIR}/backends/imgui_impl_opengl3.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stb_implementation.cpp)
target_include_directories(attnviz_imgui SYSTEM PUBLIC ${ATTNVIZ_IMGUI_DIR} ${ATTNVIZ_IMGUI_DIR}/backends
                                                       ${ATTNVIZ_IMGUI_DIR}/misc/cpp ${ATTNVIZ_HOST_INCLUDE}/stb)
target_compile_definitions(attnviz_imgui PUBLIC IMGUI_IMPL_OPENGL_ES3
                           IMGUI_DISABLE_STB_TRUETYPE_IMPLEMENTATION IMGUI_DISABLE_STB_RECT_PACK_IMPLEMENTATION
                           "IMGUI_STB_TRUETYPE_FILENAME=<stb_truetype.h>" "IMGUI_STB_RECT_PACK_FILENAME=<stb_rect_pack.h>")
target_compile_options(attnviz_imgui PRIVATE -w)  # not our code
target_link_options(attnviz_imgui PUBLIC -sUSE_GLFW=3 -sMIN_WEBGL_VERSION=2 -sMAX_WEBGL_VERSION=2)
