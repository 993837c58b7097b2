// Sign the challenge with a browser wallet (EIP-1193 provider, e.g. MetaMask) when one is
// present; otherwise the page works with a pasted signature from `trustnode web sign`.
"use strict";
(function () {
  function toHex(text) {
    var bytes = new TextEncoder().encode(text);
    var out = "0x";
    for (var i = 0; i < bytes.length; i++) {
      out += bytes[i].toString(16).padStart(2, "0");
    }
    return out;
  }
  function setup() {
    var eth = window.ethereum;
    var box = document.getElementById("wallet-box");
    if (!eth || !box) {
      return;
    }
    box.hidden = false;
    var status = document.getElementById("wallet-status");
    document.getElementById("wallet-sign").addEventListener("click", function () {
      var message = document.getElementById("message").value;
      status.textContent = "waiting for the wallet…";
      eth.request({ method: "eth_requestAccounts" })
        .then(function (accounts) {
          return eth.request({ method: "personal_sign", params: [toHex(message), accounts[0]] });
        })
        .then(function (signature) {
          document.getElementById("signature").value = signature;
          status.textContent = "signed";
          document.getElementById("signin-form").submit();
        })
        .catch(function (err) {
          status.textContent = "the wallet did not sign: " + (err && err.message ? err.message : err);
        });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
