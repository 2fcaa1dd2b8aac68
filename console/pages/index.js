// The console's pages, in navigation order. A page is a module whose
// default export is {path: RegExp over the hash path, render(ctx, main),
// and for the navigation nav (an i18n key), href, visible()?}. A new
// page (the admin screens, for one) is a new file here and one line
// below; pages share state through js/ctx.js.
import browse from "./browse.js";
import search from "./search.js";
import trash from "./trash.js";
import reviews from "./reviews.js";
import docPage from "./document.js";
import notifications from "./notifications.js";

export default [browse, search, reviews, trash, docPage, notifications];
