// The copy-citation buttons: each copies its data-copy text and says so in the status beside it. Nothing else on
// the page depends on this script; without it the citation is still there to select.
"use strict";
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button.copy");
  if (!button) return;
  const status = button.parentElement.querySelector(".copied");
  try {
    await navigator.clipboard.writeText(button.dataset.copy);
    status.textContent = "Copied";
  } catch (err) {
    status.textContent = "Copy failed: select the citation instead";
  }
});
