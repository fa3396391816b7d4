-- :checkhealth docbridge (vim.health on Neovim 0.10+, the `health` module before).

local M = {}

local function reporter()
  local health = vim.health or require("health")
  return {
    start = health.start or health.report_start,
    ok = health.ok or health.report_ok,
    warn = health.warn or health.report_warn,
    error = health.error or health.report_error,
    info = health.info or health.report_info,
  }
end

function M.check()
  local h = reporter()
  local docbridge = require("docbridge")
  h.start("Doc Bridge")
  if vim.fn.has("nvim-0.7") == 1 then
    local v = vim.version()
    h.ok(string.format("Neovim %d.%d.%d", v.major, v.minor, v.patch))
  else
    h.error("Neovim 0.7 or newer is required")
  end
  local cmd = docbridge.server_cmd()
  if cmd ~= nil then
    h.ok("server command: " .. table.concat(cmd, " ") .. " (" .. vim.fn.exepath(cmd[1]) .. ")")
  else
    local program = (docbridge.config.cmd or {})[1]
    h.error("the server command " .. vim.inspect(program) .. " is not executable", {
      "Run :DocBridgeInstall to set it up in a private environment (" .. docbridge.install_dir() .. ")",
      "or install the Doc Bridge Python package so that docbridge-lsp is on PATH",
      "or call require('docbridge').setup({ cmd = { '/abs/path/.venv/bin/docbridge-lsp' } })",
    })
  end
  local client = docbridge.client()
  if client then
    local status = docbridge.status(client.id)
    h.ok(string.format("client %d running for %s (%s)", client.id, tostring(client.config.root_dir),
      status and status.state or "no status yet"))
  else
    h.info("no Doc Bridge client is running (open a Markdown, TypeScript or JavaScript file of a project)")
  end
end

return M
