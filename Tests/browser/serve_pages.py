"""Drives `lunar serve`'s pages in headless Chromium through WebDriver.

    /usr/bin/python3 Tests/browser/serve_pages.py URL SCREENSHOTS
    /usr/bin/python3 Tests/browser/serve_pages.py --live URL RUN SCREENSHOTS
    /usr/bin/python3 Tests/browser/serve_pages.py --signal URL RUN SCREENSHOTS

URL is a running `lunar serve` over a store holding a succeeded run
(`nightly`) and a failed one (`hostile`, whose first step is named
`<img src=x onerror=alert(1)>`). Saves a screenshot of each page in
SCREENSHOTS; prints what it checked; exits 1 at the first check that fails.

With --live, RUN is a running run whose step `first` succeeds about a
second after it starts and whose step `second` waits a minute: the page
must show `first` succeeded without a reload, then cancel the run through
its button (pressed by keyboard) and show it cancelled, again without a reload.

With --signal, RUN is a running run whose step `approval` waits for the
signal `approve` and whose step `ship` then prints who approved: the page
sends the signal through its form by keyboard, and must show `approval`
succeeded with the value as its output and `ship`'s log; then the
schedules page pauses the schedule `nightly` and resumes it by its buttons.
"""

import os
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import (NoAlertPresentException, StaleElementReferenceException, TimeoutException,
                                        WebDriverException)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

HOSTILE = "<img src=x onerror=alert(1)>"


def check(condition, what):
    if not condition:
        print("FAILED: " + what, flush=True)
        sys.exit(1)
    print("ok: " + what, flush=True)


def focus(driver, selector):
    """Gives the keyboard to the element `selector` finds, found and focused
    in one turn of the page's script, so a live refresh cannot replace it in
    between; once the keyboard is in a form, the page is not replaced. True
    once it has the focus (a refresh may hide it for a moment)."""
    for attempt in range(50):
        if driver.execute_script(
                "const e = document.querySelector(arguments[0]); if (e) e.focus();"
                " return e !== null && document.activeElement === e", selector):
            return True
        time.sleep(0.1)
    return False


def press(driver, selector, what):
    """Presses the button `selector` finds by keyboard: focus, then Enter."""
    check(focus(driver, selector), what + " takes the keyboard")
    driver.switch_to.active_element.send_keys(Keys.ENTER)


def follow(driver, text):
    """Follows the link reading `text`, found and clicked in one script turn."""
    check(driver.execute_script(
        "const a = [...document.querySelectorAll('a')].find((a) => a.textContent === arguments[0]);"
        " if (a) a.click(); return a !== undefined", text), "the link '%s' is there" % text)


def step_cells(driver, name):
    """The cells after the name (Needs, Status, ..., Output at 6) of step
    `name`'s row in the steps table, or None."""
    for row in driver.find_elements(By.CSS_SELECTOR, "tbody tr"):
        heads = row.find_elements(By.TAG_NAME, "th")
        if heads and heads[0].text == name:
            return row.find_elements(By.TAG_NAME, "td")
    return None


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def no_alert(driver):
    try:
        driver.switch_to.alert
        return False
    except NoAlertPresentException:
        return True


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def main():
    base, screenshots = sys.argv[1].rstrip("/"), sys.argv[2]
    os.makedirs(screenshots, exist_ok=True)
    driver = browser()
    try:
        driver.get(base + "/")
        check(driver.title == "Runs · Lunar", "the runs page's title is " + repr(driver.title))
        rows = driver.find_elements(By.CSS_SELECTOR, "tbody tr")
        check(len(rows) == 2, "the runs page lists 2 runs, found %d" % len(rows))
        statuses = [row.find_elements(By.TAG_NAME, "td")[2].text for row in rows]
        check(statuses == ["failed", "succeeded"], "newest first, with their statuses: %s" % statuses)
        colour = rows[0].find_elements(By.TAG_NAME, "td")[2].value_of_css_property("color")
        check(colour != rows[1].find_elements(By.TAG_NAME, "td")[2].value_of_css_property("color"),
              "failed and succeeded have colours of their own (the stylesheet loaded)")
        driver.save_screenshot(os.path.join(screenshots, "runs.png"))

        # The filter form, by keyboard only: the status select, then Enter.
        Select(driver.find_element(By.NAME, "status")).select_by_value("failed")
        driver.find_element(By.NAME, "workflow").send_keys(Keys.ENTER)
        WebDriverWait(driver, 10).until(lambda d: "status=failed" in d.current_url and d.execute_script(
            "return document.readyState") == "complete")
        rows = driver.find_elements(By.CSS_SELECTOR, "tbody tr")
        check("status=failed" in driver.current_url and len(rows) == 1, "the status filter leaves the failed run")
        labels = [label.text.split("\n")[0] for label in driver.find_elements(By.TAG_NAME, "label")]
        check(labels == ["Workflow", "Status", "Started"], "the filters have labels a screen reader reads: %s" % labels)

        rows[0].find_element(By.TAG_NAME, "a").click()
        WebDriverWait(driver, 10).until(lambda d: "/runs/" in d.current_url)
        check(driver.title.startswith("Run "), "a run's link opens its page: " + repr(driver.title))
        names = [row.find_elements(By.TAG_NAME, "td")[0].text for row in driver.find_elements(By.CSS_SELECTOR, "tbody tr")]
        check(HOSTILE in names, "the step named with markup shows as text: %s" % names)
        check(not driver.find_elements(By.CSS_SELECTOR, "main img, main script, main b"),
              "no element came from the store's values")
        check(no_alert(driver), "no script from the store ran")
        errors = driver.find_elements(By.CSS_SELECTOR, "tbody td pre")
        check(any("<script>alert(2)</script>" in e.text for e in errors), "the failed step's error shows as text")
        driver.save_screenshot(os.path.join(screenshots, "run.png"))

        errors = console_errors(driver)
        check(errors == [], "the browser console has no errors on the runs and run pages: %s" % errors)

        for page in ["Queues", "Schedules"]:
            driver.find_element(By.LINK_TEXT, page).click()
            WebDriverWait(driver, 10).until(lambda d: d.title.startswith(page))
            check(driver.find_element(By.TAG_NAME, "h1").text == page, "the %s page opens from the navigation" % page)
            driver.save_screenshot(os.path.join(screenshots, page.lower() + ".png"))

        driver.get(base + "/nowhere")
        check(driver.find_element(By.TAG_NAME, "h1").text == "Not found", "an unknown path is the not-found page")
        driver.save_screenshot(os.path.join(screenshots, "not-found.png"))
        # The one error a not-found page may log is its own 404.
        errors = [e for e in console_errors(driver) if "/nowhere" not in e["message"]]
        check(errors == [], "the not-found page logs nothing else: %s" % errors)

        # Dark mode: the same page under the system's dark preference.
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                               {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        driver.get(base + "/")
        background = driver.find_element(By.TAG_NAME, "body").value_of_css_property("background-color")
        check(background in ("rgba(13, 17, 23, 1)", "rgb(13, 17, 23)"), "dark mode darkens the page: " + background)
        driver.save_screenshot(os.path.join(screenshots, "runs-dark.png"))

        # The not-found page's own 404 may reach the log only now: Chrome
        # delivers network entries late under load.
        errors = [e for e in console_errors(driver) if not e["message"].startswith(base + "/nowhere ")]
        check(errors == [], "the browser console has no errors in dark mode: %s" % errors)
    finally:
        driver.quit()


def live():
    base, run, screenshots = sys.argv[2].rstrip("/"), sys.argv[3], sys.argv[4]
    os.makedirs(screenshots, exist_ok=True)
    driver = browser()
    try:
        driver.get("%s/runs/%s" % (base, run))
        WebDriverWait(driver, 5, ignored_exceptions=[StaleElementReferenceException]).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "dd .status").text == "running")
        check(True, "the run's page shows it running")
        # A mark on the window: gone if the page were loaded again.
        driver.execute_script("window.lunarMark = 1")

        def step_status(name):
            cells = step_cells(driver, name)
            return cells[1].text if cells else None

        WebDriverWait(driver, 20, poll_frequency=0.1, ignored_exceptions=[StaleElementReferenceException]).until(
            lambda d: step_status("first") == "succeeded")
        check(driver.execute_script("return window.lunarMark") == 1, "step first turned succeeded without a reload")
        WebDriverWait(driver, 5, poll_frequency=0.1, ignored_exceptions=[StaleElementReferenceException]).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, ".run-graph g.node.succeeded"))
        check(True, "the graph draws step first's box as succeeded")
        driver.save_screenshot(os.path.join(screenshots, "live-running.png"))

        WebDriverWait(driver, 5, ignored_exceptions=[StaleElementReferenceException]).until(
            lambda d: d.find_element(By.ID, "cancel").text == "Cancel run")
        check(True, "a running run offers its cancel button")
        # By keyboard, as the signal is sent (press): a pointer click,
        # between WebDriver finding the button and pressing it, once never
        # reached the server in CI under load.
        press(driver, "#cancel", "the cancel button")

        def run_status(d):
            try:
                return d.find_element(By.CSS_SELECTOR, "dd .status").text
            except WebDriverException:
                return None

        try:
            WebDriverWait(driver, 30, poll_frequency=0.1).until(lambda d: run_status(d) == "cancelled")
        except TimeoutException:
            check(False, "the run shows cancelled; the page says: %s" % driver.find_element(By.TAG_NAME, "body").text[:2000])
        check(True, "the run shows cancelled")
        check(not driver.find_elements(By.ID, "cancel"), "a cancelled run offers no cancel button")
        driver.save_screenshot(os.path.join(screenshots, "live-cancelled.png"))
        errors = console_errors(driver)
        check(errors == [], "the browser console has no errors: %s" % errors)
    finally:
        driver.quit()


def signal():
    base, run, screenshots = sys.argv[2].rstrip("/"), sys.argv[3], sys.argv[4]
    os.makedirs(screenshots, exist_ok=True)
    driver = browser()
    # A node read while the page is replaced (a refresh, or the page a
    # form's answer leads to) is gone: the next poll reads the new one.
    waiting = WebDriverWait(driver, 20, poll_frequency=0.1,
                            ignored_exceptions=[StaleElementReferenceException, WebDriverException])
    try:
        driver.get("%s/runs/%s" % (base, run))
        waiting.until(lambda d: "approval" in d.find_element(By.TAG_NAME, "dl").text)
        check(True, "the run's page shows the step it waits on")
        # By keyboard: the name, Tab, the value, Enter; with the keyboard
        # in the form, the live page is not replaced under it.
        check(focus(driver, "input[name=signal]"), "the signal's name field takes the keyboard")
        field = driver.switch_to.active_element
        field.send_keys("approve")
        check(driver.execute_script("return document.activeElement.value") == "approve", "the name is typed into the form")
        field.send_keys(Keys.TAB)
        driver.switch_to.active_element.send_keys('{"by":"ada"}')
        driver.switch_to.active_element.send_keys(Keys.ENTER)

        def output_of(name):
            cells = step_cells(driver, name)
            return (cells[1].text, cells[6].text) if cells else None

        waiting.until(lambda d: output_of("ship") is not None and output_of("ship")[0] == "succeeded")
        status, output = output_of("approval")
        check(status == "succeeded" and "ada" in output, "the signal's value is the wait's output: %s %s" % (status, output))
        waiting.until(lambda d: d.find_element(By.CSS_SELECTOR, "dd .status").text == "succeeded")
        check(True, "the run succeeded once signalled")
        check(driver.find_elements(By.CSS_SELECTOR, "svg.timeline rect.succeeded"), "the timeline draws its steps")
        driver.save_screenshot(os.path.join(screenshots, "run-signalled.png"))

        # Rerun from step ship: a resume for a worker to take, queued.
        check(driver.execute_script(
            "const s = document.querySelector('select[name=step]');"
            " const o = s && [...s.options].find((o) => o.textContent === 'ship');"
            " if (o) { s.value = o.value; s.focus(); } return o !== undefined"), "the rerun form offers step ship")
        press(driver, "#rerun", "the Rerun button")
        waiting.until(lambda d: d.current_url.rstrip("/").endswith("/runs/%d" % (int(run) + 1)))
        waiting.until(lambda d: d.find_element(By.CSS_SELECTOR, "dd .status").text == "queued")
        check("run %s" % run in driver.find_element(By.TAG_NAME, "dl").text, "the rerun is queued and resumes run %s" % run)
        driver.save_screenshot(os.path.join(screenshots, "rerun-queued.png"))
        driver.get("%s/runs/%s" % (base, run))

        follow(driver, "All logs of this run")
        waiting.until(lambda d: d.title.startswith("Logs of run"))
        check("shipping 1.2.0, approved by ada" in driver.find_element(By.TAG_NAME, "main").text, "the logs page shows ship's line")
        driver.save_screenshot(os.path.join(screenshots, "logs.png"))

        driver.find_element(By.LINK_TEXT, "Schedules").click()
        waiting.until(lambda d: d.title.startswith("Schedules"))

        def state():
            cells = driver.find_elements(By.CSS_SELECTOR, "tbody tr td")
            return cells[3].text if len(cells) > 3 else None

        check(state() == "active", "the schedule is active")
        press(driver, "button[aria-label='Pause nightly']", "the Pause button")
        waiting.until(lambda d: state() == "paused")
        check(True, "its Pause button paused it")
        driver.save_screenshot(os.path.join(screenshots, "schedules-paused.png"))
        press(driver, "button[aria-label='Resume nightly']", "the Resume button")
        waiting.until(lambda d: state() == "active")
        check(True, "its Resume button resumed it")
        errors = console_errors(driver)
        check(errors == [], "the browser console has no errors: %s" % errors)
    finally:
        driver.quit()


if __name__ == "__main__":
    if sys.argv[1] == "--live":
        live()
    elif sys.argv[1] == "--signal":
        signal()
    else:
        main()
