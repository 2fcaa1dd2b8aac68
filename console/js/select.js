// Selecting many documents in a list (a folder, search results): a check
// box per row, Shift+click (or Shift+Space) to select a range from the
// last box used, a box in the header for every row shown, and a way for
// the page to add everything (all of a folder, all results). The
// selection stays while the list pages; it holds {id, path} per
// document, which is all bulk work needs.
import { h } from "./dom.js";
import { t } from "../i18n/index.js";

export function selection(onChange) {
  const items = new Map(); // id -> {id, path}
  let shown = [];          // the rows shown, in order: [{item, box}]
  let anchor = -1;         // the index of the last box used
  const all = h("input.select-all", { type: "checkbox", "aria-label": t("select.page") });
  const changed = () => { sync(); onChange(sel); };

  function sync() {
    for (const r of shown) r.box.checked = items.has(r.item.id);
    const n = shown.filter((r) => items.has(r.item.id)).length;
    all.checked = shown.length > 0 && n === shown.length;
    all.indeterminate = n > 0 && n < shown.length;
  }

  all.addEventListener("change", () => {
    for (const r of shown) {
      if (all.checked) items.set(r.item.id, r.item);
      else items.delete(r.item.id);
    }
    changed();
  });

  const sel = {
    items,
    get size() { return items.size; },
    list() { return [...items.values()]; },
    has(id) { return items.has(id); },
    // headerBox is the check box for every row shown.
    headerBox: all,
    // rows tells which rows are shown now (after a page or a sort).
    rows() { shown = []; anchor = -1; },
    // box is the check box of one row; index is its place in the list.
    box(item, label) {
      const box = h("input.select", { type: "checkbox", "aria-label": label || t("select.one", { name: item.path }), dataset: { id: item.id } });
      const index = shown.length;
      shown.push({ item, box });
      box.checked = items.has(item.id);
      box.addEventListener("click", (e) => {
        if (e.shiftKey && anchor >= 0 && anchor !== index) {
          const [a, b] = anchor < index ? [anchor, index] : [index, anchor];
          for (let i = a; i <= b; i++) {
            if (box.checked) items.set(shown[i].item.id, shown[i].item);
            else items.delete(shown[i].item.id);
          }
        } else if (box.checked) items.set(item.id, item);
        else items.delete(item.id);
        anchor = index;
        changed();
      });
      // Shift+Space selects a range from the keyboard as Shift+click does.
      box.addEventListener("keydown", (e) => {
        if (e.key === " " && e.shiftKey) { e.preventDefault(); box.dispatchEvent(new MouseEvent("click", { shiftKey: true, bubbles: true, cancelable: true })); }
      });
      return box;
    },
    // add selects items the page found (all of a folder, all results).
    add(list) { for (const it of list) items.set(it.id, it); changed(); },
    remove(ids) { for (const id of ids) items.delete(id); changed(); },
    clear() { items.clear(); changed(); },
    refresh: sync,
  };
  return sel;
}
