// errors.cuh: the FFI error plumbing: every extern "C" entry returns a RustError, C++
// exceptions caught (CUZK_TRY/CUZK_CATCH), sppark errors rethrown (CUZK_CHECK), checks (CUZK_REQUIRE).
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

// ---------------------------------------------------------------------------------------
// Error plumbing

#define CUZK_TRY try {
#define CUZK_CATCH                                                                    \
    } catch (const cuda_error& e) {                                                   \
        return RustError{e.code() ? e.code() : 1, e.what()};                          \
    } catch (const std::exception& e) {                                               \
        return RustError{2, e.what()};                                                \
    } catch (...) {                                                                   \
        return RustError{3, "unknown C++ exception"};                                 \
    }                                                                                 \
    return RustError{0};

#define CUZK_CHECK(rust_error_expr) do {                                              \
    RustError _e = (rust_error_expr);                                                 \
    if (_e.code != 0) {                                                               \
        std::string _m = std::string(#rust_error_expr) + "@" + __FILE__ + ":" +       \
                         std::to_string(__LINE__) + ": " +                            \
                         (_e.message ? _e.message : "sppark error");                  \
        if (_e.message) free(_e.message);                                             \
        throw cuda_error{_e.code, _m};                                                \
    }                                                                                 \
} while (0)

#define CUZK_REQUIRE(cond, msg) do {                                                  \
    if (!(cond))                                                                      \
        throw cuda_error{4, std::string(msg) + " (" #cond ")@" + __FILE__ + ":" +     \
                            std::to_string(__LINE__)};                                \
} while (0)
