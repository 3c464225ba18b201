// The implementations of the stb headers the browser build uses (Debian's libstb-dev headers):
// on the desktop they come from Debian's libstb, which Debian's libimgui links.
#define STB_RECT_PACK_IMPLEMENTATION
#include <stb_rect_pack.h>  // first: stb_truetype packs with it
#define STB_TRUETYPE_IMPLEMENTATION
#include <stb_truetype.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
