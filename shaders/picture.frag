// A kept picture, copied: the texel and nothing else.
uniform sampler2D Picture;
in vec2 Frag_UV;
layout (location = 0) out vec4 Out_Color;

void main() {
  Out_Color = texture(Picture, Frag_UV);
}
