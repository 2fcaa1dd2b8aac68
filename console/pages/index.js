// The console's pages, in navigation order. A page is a module whose
// default export is {path: RegExp over the hash path, render(ctx, main),
// and for the navigation nav (an i18n key), href, visible()?}. A new
// page (the admin screens, for one) is a new file here and one line
// below; pages share state through js/ctx.js.
import home from "./home.js";
import browse from "./browse.js";
// The admin and governor pages (js/admin.js: tabs, who sees them).
import admin from "./admin.js";
import adminUsers from "./admin-users.js";
import adminKeys from "./admin-keys.js";
import adminSites from "./admin-sites.js";
import adminConfig from "./admin-config.js";
import adminMail from "./admin-mail.js";
import adminBranding from "./admin-branding.js";
import adminHealth from "./admin-health.js";
import adminIntake from "./admin-intake.js";
import adminAttributes from "./admin-attributes.js";
import adminSchemas from "./admin-schemas.js";
const adminPages = [admin, adminUsers, adminKeys, adminSites, adminConfig, adminMail, adminBranding, adminAttributes, adminSchemas, adminIntake, adminHealth];
import search from "./search.js";
import trash from "./trash.js";
import reviews from "./reviews.js";
import docPage from "./document.js";
import notifications from "./notifications.js";

export default [home, browse, search, reviews, trash, docPage, notifications, ...adminPages];
