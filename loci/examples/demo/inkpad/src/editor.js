// The editor: a textarea with a live Markdown preview beside it.

/**
 * Render Markdown to HTML for the preview pane.
 */
export function renderPreview(markdown) {
  return markdown
    .replace(/\*\*(.+?)\*\*/g, "<b>$1</b>")
    .replace(/\*(.+?)\*/g, "<i>$1</i>");
}

/**
 * Save the draft to localStorage after the user stops typing.
 */
export function autosave(storage, key, text) {
  storage.setItem(key, text);
  return renderPreview(text);
}
