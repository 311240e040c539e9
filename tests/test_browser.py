"""The web explorer in a real browser: `sowsolve serve` in a process of its own, a headless
Chromium (Debian's chromium and chromium-driver, which .ci/run installs; no browser is
downloaded) loads the page, clicks a winning move on the board -- winning by a brute force
written from the rule text, not by the table -- and the board, the move list and the chart
change.  The screenshot the README shows is taken here."""
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import solve_to
from test_explore import diffusion_names, play_reference_cols
from test_solver_bruteforce import brute_force

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
IMAGES = pathlib.Path(__file__).parent.parent / "docs" / "images"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="no Chromium with chromedriver here (Debian: apt-get install chromium chromium-driver, "
           "which .ci/run does); the browser test is skipped")]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def server(tmp_path):
    table = tmp_path / "diffusion-2x4.sqlite"
    solve_to(table, "diffusion", cols=4, stones=1)
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", "from sowsolve.cli.entry import main; main()",
                                "serve", "--table", str(table), "--port", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(url, timeout=1).read()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise AssertionError(f"the server did not start: {process.stderr.read()[-500:]}")
            time.sleep(0.2)
    yield url
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    os.environ.setdefault("SE_OFFLINE", "true")         # never let Selenium fetch a browser
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1180,820"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def test_clicking_a_winning_move_changes_board_moves_and_chart(server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 20)
    browser.get(server)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#moves li"))
    assert browser.find_element(By.ID, "position").get_attribute("value") == "1111/1111 A"
    board_before = browser.find_element(By.ID, "board").get_attribute("innerHTML")
    listed_before = [li.get_attribute("data-move") for li in browser.find_elements(By.CSS_SELECTOR, "#moves li")]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#chart .point")) == 1

    # a move that wins for A, by the brute force: the reply position is lost for B
    value = brute_force(4, 1)
    names = diffusion_names(4)
    start = (1,) * 8
    winning = [names[pit] for pit in range(8)
               if value(play_reference_cols(start, pit, 4), "B")[0] == "loss"]
    assert winning and set(listed_before) == set(names)
    move = winning[0]
    expected = play_reference_cols(start, names.index(move), 4)
    marks = browser.find_elements(By.CSS_SELECTOR, f'#board [data-move="{move}"]')
    assert marks and "win" in marks[0].get_attribute("class")
    marks[0].click()

    after = "".join(map(str, expected[:4])) + "/" + "".join(map(str, expected[4:])) + " B"
    wait.until(lambda d: d.find_element(By.ID, "position").get_attribute("value") == after)
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#chart .point")) == 2)
    assert browser.find_element(By.ID, "board").get_attribute("innerHTML") != board_before
    listed_after = [li.get_attribute("data-move") for li in browser.find_elements(By.CSS_SELECTOR, "#moves li")]
    assert set(listed_after) == {names[p] for p in range(8) if expected[p]}
    assert all("loss" in li.get_attribute("class")
               for li in browser.find_elements(By.CSS_SELECTOR, "#moves li"))   # B is lost
    IMAGES.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(IMAGES / "explorer.png"))
