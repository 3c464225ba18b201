// A kept picture's rectangles: position and texture coordinate, no colour.
uniform mat4 ProjMtx;
in vec2 Position;
in vec2 UV;
out vec2 Frag_UV;

void main() {
  Frag_UV = UV;
  gl_Position = ProjMtx * vec4(Position.xy, 0.0, 1.0);
}
