// Heatmap fragment shader: one float texel per cell, coloured through a colormap row; a masked
// cell (marked below -0.5 in a stack of weights, which are never negative) hatched in two greys.
uniform sampler2D Values;     // R32F, one texel per cell (nearest)
uniform sampler2D Colormaps;  // RGBA8, 256 entries per row, one row per colormap (nearest)
uniform float ColormapRow;    // v of the chosen row's texel centre
uniform vec2 Range;           // the values mapped to the first and last entries
uniform float MaskedMarked;   // 1: the values mark masked cells (app/view/values.hpp)
uniform vec3 MaskedBase;      // a masked cell's greys (core/figures/colormap.hpp: masked_look)
uniform vec3 MaskedStripe;
uniform vec2 Stripe;          // the stripes' period and width, in framebuffer pixels
in vec2 Frag_UV;
layout (location = 0) out vec4 Out_Color;

void main() {
  float value = texture(Values, Frag_UV).r;
  if (MaskedMarked > 0.5 && value < -0.5) {
    // Diagonal stripes, the same on every cell, whatever its size.
    bool stripe = mod(gl_FragCoord.x + gl_FragCoord.y, Stripe.x) < Stripe.y;
    Out_Color = vec4(stripe ? MaskedStripe : MaskedBase, 1.0);
    return;
  }
  float t = clamp((value - Range.x) / (Range.y - Range.x), 0.0, 1.0);
  // Entry round(t * 255), sampled at its texel centre: the exact colour, no blending.
  float entry = floor(t * 255.0 + 0.5);
  vec3 colour = texture(Colormaps, vec2((entry + 0.5) / 256.0, ColormapRow)).rgb;
  Out_Color = vec4(colour, 1.0);  // opaque: drawn without blending
}
