/*
 * Test-only workaround for Wine 8's ConPTY (never shipped; scripts/test-windows.sh
 * builds it with MinGW): a process attached to a pseudoconsole under Wine 8 starts with
 * null standard handles, so nothing it prints reaches the pseudoconsole and it reads
 * nothing. This wrapper runs inside the pseudoconsole, opens the console itself
 * (CONIN$, CONOUT$) and starts the real command with those as its standard handles,
 * then exits with the command's exit code. On real Windows the child gets the
 * pseudoconsole's handles without help.
 *
 * Usage: conwrap.exe <command line of the real program, passed on verbatim>
 */
#include <windows.h>

/* The command line after the wrapper's own name (quoted or not) and the blanks after it. */
static wchar_t *rest_of_command_line(void) {
    wchar_t *p = GetCommandLineW();
    if (*p == L'"') {
        p++;
        while (*p && *p != L'"') p++;
        if (*p) p++;
    } else {
        while (*p && *p != L' ' && *p != L'\t') p++;
    }
    while (*p == L' ' || *p == L'\t') p++;
    return p;
}

int wmain(void) {
    SECURITY_ATTRIBUTES inherit = { sizeof(inherit), NULL, TRUE };
    HANDLE in = CreateFileW(L"CONIN$", GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE,
                            &inherit, OPEN_EXISTING, 0, NULL);
    HANDLE out = CreateFileW(L"CONOUT$", GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE,
                             &inherit, OPEN_EXISTING, 0, NULL);
    if (in == INVALID_HANDLE_VALUE || out == INVALID_HANDLE_VALUE) return 120;

    wchar_t *command = rest_of_command_line();
    if (!*command) return 121;
    STARTUPINFOW si;
    ZeroMemory(&si, sizeof(si));
    si.cb = sizeof(si);
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = in;
    si.hStdOutput = out;
    si.hStdError = out;
    PROCESS_INFORMATION pi;
    if (!CreateProcessW(NULL, command, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) return 122;
    WaitForSingleObject(pi.hProcess, INFINITE);
    DWORD code = 123;
    GetExitCodeProcess(pi.hProcess, &code);
    return (int)code;
}
