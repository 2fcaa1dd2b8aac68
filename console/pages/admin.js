// #/admin: the entry of the admin and governor pages in the header's
// navigation (shown only to a user who may use one of them); it leads to
// the first tab the user may see (js/admin.js).
import { navigate } from "../js/ctx.js";
import { firstTab } from "../js/admin.js";
import { h, clear } from "../js/dom.js";
import { t } from "../i18n/index.js";

export default {
  path: /^\/admin$/,
  nav: "nav.admin",
  href: "#/admin",
  visible: () => firstTab() !== null,
  render(ctx, main) {
    const to = firstTab();
    if (to) navigate(to);
    else clear(main, h("p", t("admin.none")));
  },
};
