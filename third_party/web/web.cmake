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
#   - SentencePiece (Marian's tokenizer, libsentencepiece-dev natively): its source package
#     (0.1.97-3, Debian 12's: the upstream tarball and Debian's patches), likewise, with the
#     protobuf-lite and absl parts it bundles; only what encodes a text, not the trainer.
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

# SentencePiece 0.1.97 from Debian's source package: the library that cuts a text into a Marian
# model's pieces (source.spm, target.spm), as libsentencepiece does natively, so that the browser
# reads a translation model's text as the app does (tests/web/ compares the two).
set(ATTNVIZ_SPM_TARBALL sentencepiece_0.1.97.orig.tar.gz)
set(ATTNVIZ_SPM_SHA256 56430381f45dc6debfd2e0cbde4f039f9499c49ca825af184b0cbf318c17a18f)
set(ATTNVIZ_SPM_DIR ${CMAKE_BINARY_DIR}/deps/sentencepiece-0.1.97)
if(NOT EXISTS ${ATTNVIZ_SPM_DIR}/src/sentencepiece_processor.cc)
  set(tarball ${CMAKE_BINARY_DIR}/deps/${ATTNVIZ_SPM_TARBALL})
  message(STATUS "Downloading SentencePiece 0.1.97's sources from Debian's archive")
  file(DOWNLOAD http://deb.debian.org/debian/pool/main/s/sentencepiece/${ATTNVIZ_SPM_TARBALL}
       ${tarball} EXPECTED_HASH SHA256=${ATTNVIZ_SPM_SHA256} STATUS download_status)
  list(GET download_status 0 download_code)
  if(NOT download_code EQUAL 0)
    message(FATAL_ERROR "cannot download ${ATTNVIZ_SPM_TARBALL} from deb.debian.org: ${download_status}")
  endif()
  file(ARCHIVE_EXTRACT INPUT ${tarball} DESTINATION ${CMAKE_BINARY_DIR}/deps)
endif()
# Debian's patches on top (debian/patches/series of 0.1.97-3, the package the native build links
# against: they add, among others, EncodeAsImmutableProto, which MarianTokenizer reads the
# pieces' byte ranges from), applied once, in the series' order.
set(ATTNVIZ_SPM_DEBIAN_TARBALL sentencepiece_0.1.97-3.debian.tar.xz)
set(ATTNVIZ_SPM_DEBIAN_SHA256 6aaa1a376752f204107e4fcb816115c4eb401dfc9ce50aa6b245e9b2ee5a63ee)
if(NOT EXISTS ${ATTNVIZ_SPM_DIR}/.debian-patches-applied)
  set(tarball ${CMAKE_BINARY_DIR}/deps/${ATTNVIZ_SPM_DEBIAN_TARBALL})
  file(DOWNLOAD http://deb.debian.org/debian/pool/main/s/sentencepiece/${ATTNVIZ_SPM_DEBIAN_TARBALL}
       ${tarball} EXPECTED_HASH SHA256=${ATTNVIZ_SPM_DEBIAN_SHA256} STATUS download_status)
  list(GET download_status 0 download_code)
  if(NOT download_code EQUAL 0)
    message(FATAL_ERROR "cannot download ${ATTNVIZ_SPM_DEBIAN_TARBALL} from deb.debian.org: ${download_status}")
  endif()
  file(ARCHIVE_EXTRACT INPUT ${tarball} DESTINATION ${CMAKE_BINARY_DIR}/deps/sentencepiece-debian)
  find_program(ATTNVIZ_PATCH patch REQUIRED)
  file(STRINGS ${CMAKE_BINARY_DIR}/deps/sentencepiece-debian/debian/patches/series patches)
  foreach(name ${patches})
    execute_process(COMMAND ${ATTNVIZ_PATCH} -p1 --batch --forward --silent
                            -i ${CMAKE_BINARY_DIR}/deps/sentencepiece-debian/debian/patches/${name}
                    WORKING_DIRECTORY ${ATTNVIZ_SPM_DIR} RESULT_VARIABLE patched)
    if(NOT patched EQUAL 0)
      message(FATAL_ERROR "Debian's patch ${name} does not apply to SentencePiece 0.1.97")
    endif()
  endforeach()
  file(TOUCH ${ATTNVIZ_SPM_DIR}/.debian-patches-applied)
endif()
# The config.h its CMakeLists.txt would write.
file(WRITE ${CMAKE_BINARY_DIR}/deps/sentencepiece-config/config.h
     "#ifndef CONFIG_H_\n#define CONFIG_H_\n#define VERSION \"0.1.97\"\n"
     "#define PACKAGE \"sentencepiece\"\n#define PACKAGE_STRING \"sentencepiece\"\n#endif\n")
set(spm ${ATTNVIZ_SPM_DIR}/src)
set(lite ${ATTNVIZ_SPM_DIR}/third_party/protobuf-lite)
set(ATTNVIZ_SPM_SOURCES)
foreach(name arena arenastring bytestream coded_stream common extension_set generated_enum_util
             generated_message_table_driven_lite generated_message_util implicit_weak_message int128
             io_win32 message_lite parse_context repeated_field status statusor stringpiece
             stringprintf structurally_valid strutil time wire_format_lite zero_copy_stream
             zero_copy_stream_impl zero_copy_stream_impl_lite)
  list(APPEND ATTNVIZ_SPM_SOURCES ${lite}/${name}.cc)
endforeach()
foreach(name builtin_pb/sentencepiece.pb builtin_pb/sentencepiece_model.pb bpe_model char_model
             error filesystem model_factory model_interface normalizer sentencepiece_processor
             unigram_model util word_model)
  list(APPEND ATTNVIZ_SPM_SOURCES ${spm}/${name}.cc)
endforeach()
# (With Debian's patches absl::string_view is std::string_view: no string_view.cc.)
list(APPEND ATTNVIZ_SPM_SOURCES ${ATTNVIZ_SPM_DIR}/third_party/absl/flags/flag.cc)
add_library(attnviz_sentencepiece STATIC ${ATTNVIZ_SPM_SOURCES})
target_include_directories(attnviz_sentencepiece SYSTEM PUBLIC ${spm}
                           PRIVATE ${spm}/builtin_pb ${lite} ${ATTNVIZ_SPM_DIR}
                                   ${ATTNVIZ_SPM_DIR}/third_party
                                   ${CMAKE_BINARY_DIR}/deps/sentencepiece-config)
# As its CMakeLists.txt compiles the bundled protobuf-lite (Emscripten's pthread.h without
# threads: the locks are no-ops, and nothing here starts a thread).
target_compile_definitions(attnviz_sentencepiece PRIVATE HAVE_PTHREAD=1 _USE_INTERNAL_STRING_VIEW)
target_compile_options(attnviz_sentencepiece PRIVATE -w)  # not our code
