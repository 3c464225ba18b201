# Writes the site's sw.js from app/platform/web/sw.js.in with the hash of the page's files, after
# each link of the browser build (cmake -P, run by app/CMakeLists.txt): a new build, a new worker.
#   cmake -DSITE=build-web/site -DTEMPLATE=app/platform/web/sw.js.in -P write_service_worker.cmake
set(hashes "")
foreach(file index.html index.js index.wasm index.data)
  file(SHA256 ${SITE}/${file} hash)
  string(APPEND hashes ${hash})
endforeach()
string(SHA256 ATTNVIZ_SITE_VERSION "${hashes}")
string(SUBSTRING ${ATTNVIZ_SITE_VERSION} 0 16 ATTNVIZ_SITE_VERSION)
configure_file(${TEMPLATE} ${SITE}/sw.js @ONLY)
