;;; emacs_e2e.el --- Doc Bridge with Emacs's eglot, headless  -*- lexical-binding: t -*-
;;
;; Run by tests/test_emacs_eglot.py: `emacs --batch -l emacs_e2e.el` with SNIPPET (the README's eglot
;; configuration, loaded as a user's init file would), ROOT (a git repository copied from fixtures/acme) and
;; REPORT (where the JSON list of checks goes). docbridge-lsp is on PATH.

(require 'json)
(require 'seq)
(defvar docbridge-checks nil)

(defun docbridge-check (name ok &optional detail)
  (push `((name . ,name) (ok . ,(if ok t :json-false)) (detail . ,(format "%s" (or detail "")))) docbridge-checks)
  (message "%s %s %s" (if ok "ok  " "FAIL") name (or detail "")))

(defun docbridge-wait (predicate seconds)
  "Process output until PREDICATE holds or SECONDS pass; PREDICATE's last value."
  (let ((deadline (+ (float-time) seconds)) value)
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.1))
    value))

(defun docbridge-open (relative)
  "Visit RELATIVE under ROOT and connect it as eglot-ensure would after the first command."
  (find-file (expand-file-name relative (getenv "ROOT")))
  (run-hooks 'post-command-hook)
  (docbridge-wait #'eglot-current-server 30))

(condition-case err
    (progn
      (load (getenv "SNIPPET") nil t)
      (require 'markdown-mode)
      (require 'eglot)
      (let ((server (docbridge-open "docs/architecture.md")))
        (docbridge-check "markdown-mode buffers get the docbridge server" (and server (eq major-mode 'markdown-mode))
                         major-mode)
        (docbridge-check "the project is the repository"
                         (and server (string= (file-name-as-directory (expand-file-name (getenv "ROOT")))
                                              (expand-file-name (project-root (eglot--project server)))))))
      (let ((broken (docbridge-wait
                     (lambda ()
                       (flymake-start)
                       (seq-find (lambda (d) (string-match-p "LINK_BROKEN.*deployment-v1\\.md" (flymake-diagnostic-text d)))
                                 (flymake-diagnostics)))
                     60)))
        (docbridge-check "flymake shows LINK_BROKEN for ./deployment-v1.md on line 58"
                         (and broken (= 58 (line-number-at-pos (flymake-diagnostic-beg broken))))
                         (mapcar #'flymake-diagnostic-text (flymake-diagnostics))))
      (docbridge-open "docs/billing.md")
      (goto-char (point-min))
      (forward-line 19)
      (search-forward "createInvoice")
      (backward-char 3)
      (let* ((backend (xref-find-backend))
             (definitions (xref-backend-definitions backend (xref-backend-identifier-at-point backend)))
             (location (and definitions (xref-item-location (car definitions)))))
        (docbridge-check "xref goes from `createInvoice` to src/billing/invoice.ts:44"
                         (and location (string-suffix-p "src/billing/invoice.ts" (xref-location-group location))
                              (= 44 (xref-location-line location)))
                         (and location (format "%s:%s" (xref-location-group location) (xref-location-line location))))))
  (error (docbridge-check "the script ran to the end" nil (error-message-string err))))

(with-temp-file (getenv "REPORT")
  (insert (json-encode (reverse docbridge-checks))))
(kill-emacs (if (seq-every-p (lambda (c) (eq (alist-get 'ok c) t)) docbridge-checks) 0 1))
