// Keeps ksim_test_support a real archive even before any shared fixture exists.
namespace ksim::testing {}
