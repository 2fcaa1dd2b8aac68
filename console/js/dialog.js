// A question with a few answers, in a modal <dialog> (the browser keeps
// the focus inside it and Escape answers "cancel"): choose() resolves
// with the answer's value, and whether "do the same for the others" was
// ticked. One question at a time: a second waits for the first.
import { h } from "./dom.js";

let queue = Promise.resolve();

export function choose({ id, title, text, choices, cancel, remember }) {
  const run = () => new Promise((resolve) => {
    const box = remember ? h("input", { type: "checkbox", id: id + "-all" }) : null;
    const dlg = h("dialog.ask", { id, "aria-labelledby": id + "-title", "aria-describedby": id + "-text" },
      h("h2", { id: id + "-title" }, title),
      h("p", { id: id + "-text" }, text),
      box ? h("p", box, " ", h("label", { for: id + "-all" }, remember)) : null,
      h("div.actions", choices.map((c) => h(c.primary ? "button.primary" : c.danger ? "button.danger" : "button",
        { type: "button", dataset: { choice: c.value }, onclick: () => done(c.value) }, c.label))));
    let answered = false;
    function done(value) {
      if (answered) return;
      answered = true;
      const all = !!(box && box.checked);
      dlg.close();
      dlg.remove();
      resolve({ value, all });
    }
    dlg.addEventListener("cancel", (e) => { e.preventDefault(); done(cancel); });
    document.body.append(dlg);
    dlg.showModal();
    const first = dlg.querySelector("button.primary") || dlg.querySelector("button");
    if (first) first.focus();
  });
  const p = queue.then(run);
  queue = p.catch(() => {});
  return p;
}
