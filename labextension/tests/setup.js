// jsdom has no DragEvent, which @lumino/dragdrop (pulled in by @lumino/widgets) extends at import time.
if (typeof globalThis.DragEvent === 'undefined') {
  globalThis.DragEvent = class DragEvent extends MouseEvent {};
}
