"""End to end on virtual phones with no model: the question's prices, cited and grounded.

Real Prefect, real Celery workers running ``copilot.navigate``, real Redis and S3.
"""

from __future__ import annotations

from flows.models import RetrieveRequest
from flows.retrieve import retrieve
from flows.runtime import open_services
from tests.flows.conftest import FlowFarm
from tests.flows.reports import comparison_row, price_citation, run_captures

MCDONALDS, MEITUAN, ELEME = "com.mcdonalds.gma.cn", "com.sankuai.meituan", "me.ele"
TAOBAO, JD = "com.taobao.taobao", "com.jingdong.app.mall"


def test_big_mac_comparison_cites_each_apps_price(flow_farm: FlowFarm) -> None:
    outcome = retrieve(RetrieveRequest(
        text="Is a Big Mac cheaper on McDonald's, Meituan or Ele.me?"))
    report = outcome.report
    captures = run_captures(open_services(flow_farm.settings), outcome)
    assert {c.package for c in captures.values()} == {MCDONALDS, MEITUAN, ELEME}

    prices = comparison_row(report, "Price")
    # The simulator's data: Meituan's first McDonald's store 25.5, Ele.me's 22.9.
    assert "¥25.5" in prices and "¥22.9" in prices
    price_citation(report, captures, MEITUAN, "25.5")
    price_citation(report, captures, ELEME, "22.9")
    price_citation(report, captures, MCDONALDS, "24.0")  # McDonald's own menu
    assert "Lowest price" in report.markdown
    assert not report.unverified, report.unverified


def test_vivo_x100_ultra_comparison_cites_taobao_and_jd(flow_farm: FlowFarm) -> None:
    outcome = retrieve(RetrieveRequest(text="How much is the vivo X100 Ultra on Taobao and JD?"))
    report = outcome.report
    captures = run_captures(open_services(flow_farm.settings), outcome)
    assert {c.package for c in captures.values()} == {TAOBAO, JD}
    # The extractive writer compares only the apps' best-matching items; here Taobao's best
    # match is a title without a price, so there is no table: each app's price is still cited.
    price_citation(report, captures, TAOBAO, "6299")
    price_citation(report, captures, JD, "6499")
    assert not report.unverified, report.unverified
